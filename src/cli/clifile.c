/* SPDX-License-Identifier: Apache-2.0 */
/* clifile.c - small file helpers of the CLI: a whole file into memory, SHA-256 in hex, and an
 * audit public key given as hex or as a file (kerfd's <state>/audit.pub) */
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "cli.h"

char *cli_file_read(const char *path, size_t *ret_len)
{
        FILE *f = fopen(path, "re"), *m;
        char *buf = NULL, chunk[65536];
        size_t len = 0, k;

        if (!f)
                return NULL;
        m = open_memstream(&buf, &len);
        if (!m) {
                fclose(f);
                return NULL;
        }
        while ((k = fread(chunk, 1, sizeof(chunk), f)) > 0)
                fwrite(chunk, 1, k, m);
        if (ferror(f)) {
                fclose(f);
                fclose(m);
                free(buf);
                errno = EIO;
                return NULL;
        }
        fclose(f);
        if (fclose(m) != 0) {
                free(buf);
                return NULL;
        }
        if (ret_len)
                *ret_len = len;
        return buf;
}

void cli_sha256_hex(const void *data, size_t len, char out[CLI_SHA256_HEX])
{
        unsigned char h[crypto_hash_sha256_BYTES];
        crypto_hash_sha256(h, data, len);
        sodium_bin2hex(out, CLI_SHA256_HEX, h, sizeof(h));
}

int cli_pub_key_parse(const char *arg, char pub[KERF_STORE_PK_HEX], char *why, size_t cap)
{
        char *text = NULL;
        const char *v = arg;
        size_t n;

        if (strlen(arg) != KERF_STORE_PK_HEX - 1 ||
            strspn(arg, "0123456789abcdef") != KERF_STORE_PK_HEX - 1) {
                if (!(text = cli_file_read(arg, NULL))) {
                        snprintf(why, cap,
                                 "%s: %s (an Ed25519 public key: 64 hex digits, or "
                                 "a file holding them such as kerfd's audit.pub)",
                                 cli_safe(arg), strerror(errno));
                        return -1;
                }
                v = text;
        }
        n = strspn(v, "0123456789abcdef");
        if (n != KERF_STORE_PK_HEX - 1 || (v[n] && v[n] != '\n')) {
                snprintf(why, cap,
                         "expected an Ed25519 public key (64 hex digits, or a file "
                         "holding them such as kerfd's audit.pub)");
                free(text);
                return -1;
        }
        memcpy(pub, v, n);
        pub[n] = '\0';
        free(text);
        return 0;
}

int cli_pub_key(const char *arg, const char *opt, char pub[KERF_STORE_PK_HEX])
{
        char why[512];
        if (cli_pub_key_parse(arg, pub, why, sizeof(why)) < 0) {
                cli_err("%s: %s", opt, why);
                return KERF_EXIT_USAGE;
        }
        return 0;
}
