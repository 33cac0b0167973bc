/* SPDX-License-Identifier: Apache-2.0 */
/* main.c - kerf-replay: the same command as `kerf replay`, as a program of its own */
#include "replay_cli.h"

int main(int argc, char **argv)
{
        return kerf_replay_cli(argc, argv);
}
