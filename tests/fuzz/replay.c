/* SPDX-License-Identifier: Apache-2.0 */
/* replay.c - runs a fuzz target's LLVMFuzzerTestOneInput over files and directories without
 * libFuzzer: the corpus replay that `make test` runs with the normal compiler (the crashers
 * kept in the corpus are regressions). Usage: fuzz_replay_TARGET PATH... */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int one(const char *path, unsigned *count)
{
        FILE *f = fopen(path, "rb");
        uint8_t *buf;
        long len;

        if (!f || fseek(f, 0, SEEK_END) < 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0) {
                fprintf(stderr, "replay: cannot read %s\n", path);
                if (f)
                        fclose(f);
                return -1;
        }
        buf = malloc((size_t)len + 1);
        if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
                fprintf(stderr, "replay: cannot read %s\n", path);
                free(buf);
                fclose(f);
                return -1;
        }
        fclose(f);
        LLVMFuzzerTestOneInput(buf, (size_t)len);
        free(buf);
        (*count)++;
        return 0;
}

static int walk(const char *path, unsigned *count)
{
        struct stat st;
        struct dirent **ents;
        int n, r = 0;

        if (stat(path, &st) < 0) {
                fprintf(stderr, "replay: no %s\n", path);
                return -1;
        }
        if (!S_ISDIR(st.st_mode))
                return one(path, count);
        n = scandir(path, &ents, NULL, alphasort);
        if (n < 0)
                return -1;
        for (int i = 0; i < n; i++) {
                char sub[4096];
                if (ents[i]->d_name[0] != '.') {
                        snprintf(sub, sizeof(sub), "%s/%s", path, ents[i]->d_name);
                        if (walk(sub, count) < 0)
                                r = -1;
                }
                free(ents[i]);
        }
        free(ents);
        return r;
}

int main(int argc, char **argv)
{
        unsigned count = 0;
        int r = 0;

        if (LLVMFuzzerInitialize)
                LLVMFuzzerInitialize(&argc, &argv);
        for (int i = 1; i < argc; i++)
                if (walk(argv[i], &count) < 0)
                        r = 1;
        printf("replay: %u inputs, no crash\n", count);
        return r || count == 0;
}
