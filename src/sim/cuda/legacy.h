/* SPDX-License-Identifier: Apache-2.0 */
/* legacy.h - exported entry points whose names cuda.h maps to newer versions */
#ifndef KERF_SIM_CUDA_LEGACY_H
#define KERF_SIM_CUDA_LEGACY_H

#include "internal.h"

/* cuda.h #defines these names to their _v2/_v3 successors, so they cannot be declared in
 * cuda_abi_protos.h (the ABI test includes it after cuda.h); older binaries still bind them. */
KERF_CUDA_EXPORT CUresult cuLinkCreate(unsigned int, CUjit_option *, void **, CUlinkState *);
KERF_CUDA_EXPORT CUresult cuLinkAddData(CUlinkState, CUjitInputType, void *, size_t, const char *,
                                        unsigned int, CUjit_option *, void **);
KERF_CUDA_EXPORT CUresult cuLinkAddFile(CUlinkState, CUjitInputType, const char *, unsigned int,
                                        CUjit_option *, void **);
KERF_CUDA_EXPORT CUresult cuMemHostRegister(void *, size_t, unsigned int);
KERF_CUDA_EXPORT CUresult cuMemAdvise(CUdeviceptr, size_t, CUmem_advise, CUdevice);
KERF_CUDA_EXPORT CUresult cuMemPrefetchAsync(CUdeviceptr, size_t, CUdevice, CUstream);
KERF_CUDA_EXPORT CUresult cuMemPrefetchAsync_ptsz(CUdeviceptr, size_t, CUdevice, CUstream);
KERF_CUDA_EXPORT CUresult cuStreamGetCaptureInfo(CUstream, CUstreamCaptureStatus *, cuuint64_t *);
KERF_CUDA_EXPORT CUresult cuStreamGetCaptureInfo_ptsz(CUstream, CUstreamCaptureStatus *,
                                                      cuuint64_t *);
KERF_CUDA_EXPORT CUresult cuStreamGetCaptureInfo_v2(CUstream, CUstreamCaptureStatus *, cuuint64_t *,
                                                    CUgraph *, const CUgraphNode **, size_t *);
KERF_CUDA_EXPORT CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream, CUstreamCaptureStatus *,
                                                         cuuint64_t *, CUgraph *,
                                                         const CUgraphNode **, size_t *);

/* Handle kinds of the files added after internal.h's list (kept clear of it). */
enum { KC_H_LINK = 64 };

/* ctxmisc.c: forgets the per-context settings of a destroyed context. Caller holds kc_g.mu. */
void kc__ctxmisc_forget(const kc_ctx *ctx);

#endif /* KERF_SIM_CUDA_LEGACY_H */
