/* SPDX-License-Identifier: Apache-2.0 */
/* load.h - kerf-load: the POC's workload program (modes, options, driver, JSON lines) */
#ifndef KERF_LOAD_H
#define KERF_LOAD_H

/*
 * kerf-load MODE [options]: a CUDA driver API program that loads libcuda.so.1 at run time, so
 * that one binary runs on kerf-sim and on a real GPU, with or without the kerf shim in front.
 * docs/POC.md "kerf-load" documents the modes, options and output.
 *
 *   main.c       main: parse, open the driver, start line, dispatch to the mode
 *   args.c       the option table: parsing, validation, --help
 *   cuda.c       the driver (dlopen + cuGetProcAddress_v2), spin kernels, error lines
 *   out.c        JSON lines on stdout (escaping, one flush per line), percentiles
 *   serve.c      serve;  train.c  train;  modes.c  dev, hog, crash, probe
 *
 * Exit codes: 0 success, 1 a CUDA failure (an "error" line says which call), 2 bad arguments
 * (one line on stderr naming the argument), 3 crash --how exit.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_abi.h"

enum { KL_EXIT_OK = 0, KL_EXIT_CUDA = 1, KL_EXIT_USAGE = 2, KL_EXIT_CRASH = 3 };

typedef enum kl_mode { KL_SERVE, KL_TRAIN, KL_DEV, KL_HOG, KL_CRASH, KL_PROBE, KL_NMODES } kl_mode;

typedef enum kl_pattern { KL_STEADY, KL_RAMP, KL_BURST, KL_POISSON } kl_pattern;

typedef enum kl_how { KL_SEGV, KL_ABORT, KL_EXIT, KL_KILL } kl_how;

enum { KL_MAX_RATES = 64 };

/* Every option of every mode; args.c's table says which mode takes which and the bounds. */
typedef struct kl_opts {
        kl_mode mode;
        int device;
        uint64_t seed;
        uint64_t window_ms;
        double seconds; /* 0: not given */
        uint64_t mem;   /* bytes held for the run (serve, train, dev) */
        /* serve */
        double rate;
        double rates[KL_MAX_RATES];
        unsigned nrates;
        kl_pattern pattern;
        uint64_t kernels;
        uint64_t kernel_us;
        /* train */
        uint64_t step_us;
        uint64_t steps; /* 0: not given */
        const char *checkpoint;
        uint64_t checkpoint_every;
        /* dev */
        uint64_t busy_ms, idle_ms;
        /* hog */
        uint64_t chunk;
        double hold_s; /* < 0: until killed */
        bool spin;
        /* crash */
        uint64_t after_ms;
        kl_how how;
        /* probe */
        uint64_t warmup_ms;
} kl_opts;

/* Parses argv into *o (defaults first). Returns 0, 1 when --help was printed (exit 0), or 2
 * after one line on stderr naming the bad argument. */
int kl_args_parse(int argc, char **argv, kl_opts *o);
const char *kl_mode_name(kl_mode m);
const char *kl_pattern_name(kl_pattern p);
const char *kl_how_name(kl_how h);

/* ---- JSON lines (out.c) ---- */

typedef struct kl_line {
        char buf[16384];
        size_t n;
        bool overflow;
} kl_line;

/* Starts a line {"event":EV (always the first key). */
void kl_line_begin(kl_line *l, const char *event);
void kl_line_str(kl_line *l, const char *key, const char *val); /* NULL: null */
void kl_line_u64(kl_line *l, const char *key, uint64_t v);
void kl_line_i64(kl_line *l, const char *key, int64_t v);
void kl_line_dbl(kl_line *l, const char *key, double v); /* NaN/inf: null */
void kl_line_bool(kl_line *l, const char *key, bool v);
/* An array of strings / numbers. */
void kl_line_strv(kl_line *l, const char *key, char *const *v, size_t n);
void kl_line_dblv(kl_line *l, const char *key, const double *v, size_t n);
/* Closes the object, writes it and a newline to stdout and flushes. */
void kl_line_end(kl_line *l);

/* Milliseconds since the program started (CLOCK_MONOTONIC). */
double kl_t_ms(void);
uint64_t kl_now_ns(void);
void kl_sleep_ns(uint64_t ns);
/* Sleeps until the CLOCK_MONOTONIC time `at_ns`. */
void kl_sleep_until(uint64_t at_ns);

/* Latency samples (ms): a growable array. */
typedef struct kl_lat {
        double *v;
        size_t n, cap;
} kl_lat;
int kl_lat_add(kl_lat *s, double ms); /* 0 or -ENOMEM */
/* The q-quantile (0..1, nearest rank) of the samples; sorts them; NaN when empty. */
double kl_lat_quantile(kl_lat *s, double q);
void kl_lat_clear(kl_lat *s);
void kl_lat_fini(kl_lat *s);

/* ---- the driver (cuda.c) ---- */

typedef struct kl_fns {
        CUresult (*cuInit)(unsigned);
        CUresult (*cuDriverGetVersion)(int *);
        CUresult (*cuDeviceGet)(CUdevice *, int);
        CUresult (*cuDeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
        CUresult (*cuDeviceGetName)(char *, int, CUdevice);
        CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
        CUresult (*cuCtxSetCurrent)(CUcontext);
        CUresult (*cuModuleLoadData)(CUmodule *, const void *);
        CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
        CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   unsigned, unsigned, CUstream, void **, void **);
        CUresult (*cuStreamCreate)(CUstream *, unsigned);
        CUresult (*cuStreamSynchronize)(CUstream);
        CUresult (*cuEventCreate)(CUevent *, unsigned);
        CUresult (*cuEventRecord)(CUevent, CUstream);
        CUresult (*cuEventSynchronize)(CUevent);
        CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
        CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
        CUresult (*cuMemFree)(CUdeviceptr);
        CUresult (*cuMemGetInfo)(size_t *, size_t *);
        CUresult (*cuGetErrorName)(CUresult, const char **);
} kl_fns;

extern kl_fns kl_cu;

typedef struct kl_gpu {
        CUdevice dev;
        CUcontext ctx;
        CUstream stream;
        char name[256];
        size_t mem_total, mem_free; /* cuMemGetInfo at open */
        int sms;
        int driver_version;
        bool ptx;             /* kernels from PTX (hardware), else the simulated module format */
        const char *procaddr; /* "cuGetProcAddress_v2" or "dlsym" */
} kl_gpu;

/* Loads libcuda.so.1, makes device `device`'s primary context current, creates a stream and
 * reads the device's name and memory. On failure prints an error line (or, without libcuda,
 * one line on stderr) and returns -1. */
int kl_cuda_open(int device, kl_gpu *g);
/* The CUDA error's name (CUDA_ERROR_...), or "CUresult_N". Static storage. */
const char *kl_cuda_errname(CUresult r);
/* Prints {"event":"error","t_ms":..,"call":CALL,"error":NAME,"code":N}. */
void kl_cuda_error(const char *call, CUresult r);
/* Launches one spin kernel of `us` microseconds on `stream` (loads its module on first use).
 * Returns the driver's answer; an error line is the caller's to print (call name in *call). */
CUresult kl_spin(kl_gpu *g, CUstream stream, uint64_t us, const char **call);
/* The PTX text of the hardware spin kernel (for ptxas in the tests). */
const char *kl_spin_ptx(void);

/* ---- modes ---- */
int kl_serve(const kl_opts *o, kl_gpu *g);
int kl_train(const kl_opts *o, kl_gpu *g);
int kl_dev(const kl_opts *o, kl_gpu *g);
int kl_hog(const kl_opts *o, kl_gpu *g);
int kl_crash(const kl_opts *o, kl_gpu *g);
int kl_probe(const kl_opts *o, kl_gpu *g);

/* Allocates o->mem bytes (none when 0) into *ret (error line and -1 on failure). */
int kl_hold_mem(const kl_opts *o, CUdeviceptr *ret);

#endif
