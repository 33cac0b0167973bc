/* SPDX-License-Identifier: Apache-2.0 */
/* replay_cli.h - the replay command shared by `kerf replay` and kerf-replay */
#ifndef KERF_REPLAY_CLI_H
#define KERF_REPLAY_CLI_H

/* Runs the replay command line (argv[0] is the command name): parses flags, replays, prints
 * the curve to stdout and errors (one line) to stderr. Returns the exit code: 0, 1 (bad
 * input file), 2 (bad command line). Runs locally: no kerfd needed. */
int kerf_replay_cli(int argc, char **argv);

#endif /* KERF_REPLAY_CLI_H */
