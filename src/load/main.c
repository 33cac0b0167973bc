/* SPDX-License-Identifier: Apache-2.0 */
/* main.c - kerf-load: parse, open the driver, print the start line, run the mode */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "load.h"

/*
 * main -> kl_args_parse -> kl_cuda_open (dlopen libcuda.so.1, context, stream, kernel kind)
 *      -> start line -> kl_<mode> (window lines..., result line) -> exit code.
 */
int main(int argc, char **argv)
{
        (void)kl_t_ms(); /* t = 0 */
        if (argc == 2 && !strcmp(argv[1], "--version")) {
                printf("kerf-load %s\n", KERF_VERSION);
                return 0;
        }
        if (argc == 2 && !strcmp(argv[1], "--print-ptx")) {
                fputs(kl_spin_ptx(), stdout);
                return 0;
        }
        kl_opts o;
        int r = kl_args_parse(argc, argv, &o);
        if (r == 1)
                return KL_EXIT_OK;
        if (r)
                return r;
        kl_gpu g;
        if (kl_cuda_open(o.device, &g) < 0)
                return KL_EXIT_CUDA;
        kl_line l;
        kl_line_begin(&l, "start");
        kl_line_str(&l, "mode", kl_mode_name(o.mode));
        kl_line_i64(&l, "pid", (int64_t)getpid());
        kl_line_dbl(&l, "t_ms", kl_t_ms());
        kl_line_i64(&l, "device", o.device);
        kl_line_str(&l, "device_name", g.name);
        kl_line_u64(&l, "memory_total", g.mem_total);
        kl_line_u64(&l, "memory_free", g.mem_free);
        kl_line_i64(&l, "driver_version", g.driver_version);
        kl_line_str(&l, "kernels", g.ptx ? "ptx" : "kerfsim");
        kl_line_str(&l, "procaddr", g.procaddr);
        kl_line_strv(&l, "args", argv + 1, (size_t)(argc - 1));
        kl_line_end(&l);
        switch (o.mode) {
        case KL_SERVE:
                return kl_serve(&o, &g);
        case KL_TRAIN:
                return kl_train(&o, &g);
        case KL_DEV:
                return kl_dev(&o, &g);
        case KL_HOG:
                return kl_hog(&o, &g);
        case KL_CRASH:
                return kl_crash(&o, &g);
        case KL_PROBE:
                return kl_probe(&o, &g);
        case KL_NMODES:
                break;
        }
        return KL_EXIT_USAGE;
}
