/* SPDX-License-Identifier: Apache-2.0 */
/* clicfg.c - the kerf client's own configuration file, and "did you mean" for mistyped words.
 *
 * The file: $KERF_CONFIG, else $XDG_CONFIG_HOME/kerf/config.yaml, else
 * ~/.config/kerf/config.yaml; absent is fine. A YAML mapping of
 *   socket: PATH | url: http://127.0.0.1:PORT | token_file: PATH | node: NAME | output: table|json
 * What it sets counts only where the command line and the environment ($KERF_SOCKET,
 * $KERF_TOKEN) say nothing (docs/CLI.md "Client configuration"). A token is never read from the
 * file itself, only from token_file, which must be a regular file the caller owns that group
 * and others cannot read (as ssh checks its keys). Every mistake names the file, the line and
 * the key. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "cli.h"
#include "kerf/fields.h"

static char cfg_path[4096];
static char cfg_socket[4096], cfg_url[256], cfg_token[512], cfg_node[128];

static const char *file_path(void)
{
        const char *e = getenv("KERF_CONFIG"), *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
        if (e && *e)
                snprintf(cfg_path, sizeof(cfg_path), "%s", e);
        else if (x && *x)
                snprintf(cfg_path, sizeof(cfg_path), "%s/kerf/config.yaml", x);
        else if (h && *h)
                snprintf(cfg_path, sizeof(cfg_path), "%s/.config/kerf/config.yaml", h);
        else
                return NULL;
        return cfg_path;
}

/* The token in `path`: one line, a private regular file of the caller's. 0 or an exit code. */
static int read_token(const char *cfg, size_t line, const char *path)
{
        struct stat st;
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) {
                cli_err("%s:%zu: token_file: cannot open %s: %s", cfg, line, path, strerror(errno));
                return KERF_EXIT_USAGE;
        }
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
            (st.st_mode & 077)) {
                close(fd);
                cli_err("%s:%zu: token_file: %s must be a regular file you own, mode 0600 or "
                        "stricter (chmod 600 %s)",
                        cfg, line, path, path);
                return KERF_EXIT_USAGE;
        }
        ssize_t n = read(fd, cfg_token, sizeof(cfg_token) - 1);
        close(fd);
        if (n <= 0) {
                cli_err("%s:%zu: token_file: %s is empty", cfg, line, path);
                return KERF_EXIT_USAGE;
        }
        cfg_token[n] = '\0';
        cfg_token[strcspn(cfg_token, "\r\n")] = '\0';
        return 0;
}

int cli_config_load(kerf_client_opts *o, bool *json, const char **node)
{
        static const char *const keys[] = {"socket", "url", "token_file", "node", "output"};
        const char *path = file_path();
        FILE *f;
        yaml_parser_t p;
        yaml_document_t d;
        int ex = 0;

        /* where kerfd is: the file's socket/url/node only when no flag or $KERF_SOCKET says */
        bool endpoint_set = o->socket || o->url || (node && *node) || getenv("KERF_SOCKET");
        if (!path || !(f = fopen(path, "re")))
                return 0; /* no file: nothing to apply */
        if (!yaml_parser_initialize(&p)) {
                fclose(f);
                return 0;
        }
        yaml_parser_set_input_file(&p, f);
        if (!yaml_parser_load(&p, &d)) {
                cli_err("%s:%zu: not YAML: %s", path, p.problem_mark.line + 1,
                        p.problem ? p.problem : "parse error");
                yaml_parser_delete(&p);
                fclose(f);
                return KERF_EXIT_USAGE;
        }
        yaml_node_t *root = yaml_document_get_root_node(&d);
        if (root && root->type != YAML_MAPPING_NODE) {
                cli_err("%s:%zu: expected a mapping of socket, url, token_file, node, output", path,
                        root->start_mark.line + 1);
                ex = KERF_EXIT_USAGE;
        }
        for (yaml_node_pair_t *pr = root && !ex ? root->data.mapping.pairs.start : NULL;
             pr && pr < root->data.mapping.pairs.top && !ex; pr++) {
                yaml_node_t *k = yaml_document_get_node(&d, pr->key),
                            *v = yaml_document_get_node(&d, pr->value);
                size_t line = k->start_mark.line + 1;
                const char *key =
                    k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "";
                const char *val =
                    v->type == YAML_SCALAR_NODE ? (const char *)v->data.scalar.value : NULL;
                size_t ki = 0;
                while (ki < 5 && strcmp(key, keys[ki]))
                        ki++;
                if (ki == 5) {
                        const char *near = cli_nearest(key, keys, 5);
                        cli_err("%s:%zu: unknown key '%s'%s%s%s (keys: socket, url, token_file, "
                                "node, output)",
                                path, line, key, near ? "; did you mean '" : "", near ? near : "",
                                near ? "'?" : "");
                        ex = KERF_EXIT_USAGE;
                        break;
                }
                if (!val || !*val) {
                        cli_err("%s:%zu: %s: expected a non-empty string", path, line, key);
                        ex = KERF_EXIT_USAGE;
                        break;
                }
                switch (ki) {
                case 0:
                        snprintf(cfg_socket, sizeof(cfg_socket), "%s", val);
                        if (!endpoint_set && !o->url && !(node && *node))
                                o->socket = cfg_socket;
                        break;
                case 1:
                        if (strncmp(val, "http://", 7)) {
                                cli_err("%s:%zu: url: '%s' must start with http://", path, line,
                                        val);
                                ex = KERF_EXIT_USAGE;
                                break;
                        }
                        snprintf(cfg_url, sizeof(cfg_url), "%s", val);
                        if (!endpoint_set && !o->socket && !(node && *node))
                                o->url = cfg_url;
                        break;
                case 2:
                        if (!o->token && !getenv("KERF_TOKEN")) {
                                ex = read_token(path, line, val);
                                if (!ex)
                                        o->token = cfg_token;
                        }
                        break;
                case 3:
                        snprintf(cfg_node, sizeof(cfg_node), "%s", val);
                        if (!endpoint_set && node && !*node && !o->socket && !o->url)
                                *node = cfg_node;
                        break;
                case 4:
                        if (strcmp(val, "table") && strcmp(val, "json")) {
                                cli_err("%s:%zu: output: '%s': table or json", path, line, val);
                                ex = KERF_EXIT_USAGE;
                        } else if (!strcmp(val, "json")) {
                                *json = true;
                        }
                        break;
                }
        }
        yaml_document_delete(&d);
        yaml_parser_delete(&p);
        fclose(f);
        return ex;
}

const char *cli_nearest(const char *word, const char *const *cands, size_t n)
{
        return kerf_nearest(word, cands, n); /* the one distance rule, in core */
}
