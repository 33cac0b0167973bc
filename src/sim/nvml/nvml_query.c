/* SPDX-License-Identifier: Apache-2.0 */
/* nvml_query.c - simulated NVML: the further device/system queries monitoring tools make */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "nvml_internal.h"

/*
 * What nvidia-smi-like tools, pynvml, PyTorch, vLLM and DCGM-style exporters ask beyond
 * GPU-REFERENCE §2.2. Answers are plausible fixed figures per model, or NOT_SUPPORTED where the
 * real part would say so (fans on passively cooled boards) or nothing is simulated (NVLink).
 * Every figure is simulated; docs/SIMULATOR.md lists them.
 *
 * Conventions of every entry point here: UNINITIALIZED before anything else, then the handle
 * (INVALID_ARGUMENT; GPU_IS_LOST for a lost GPU), then NULL outputs (INVALID_ARGUMENT), then
 * NOT_SUPPORTED. Board-level queries (clocks, power, PCIe, fans, ECC, modes, BAR1, serial...)
 * answer NOT_SUPPORTED on MIG device handles [UNVERIFIED]; identity queries (index, compute
 * capability, architecture, brand, cores, attributes) answer for them.
 */

/* Per-model board figures, looked up by kerf's model name. Clocks in MHz (maximum boost);
 * made up from public spec sheets, [UNVERIFIED] against a live nvidia-smi. */
struct board {
        const char *model;
        unsigned sm_mhz, mem_mhz, video_mhz;
        unsigned pcie_gen;
};

static const struct board boards[] = {
    {"H200-141GB", 1980, 3201, 1545, 5}, {"H100-80GB", 1980, 2619, 1545, 5},
    {"A100-80GB", 1410, 1593, 1290, 4},  {"A100-40GB", 1410, 1215, 1290, 4},
    {"L40S", 2520, 9001, 1965, 4},       {"L4", 2040, 6251, 1545, 4},
    {"A10", 1695, 6251, 1530, 4},        {"T4", 1590, 5001, 1470, 3},
    {"V100M32", 1530, 877, 1372, 3},     {"V100M16", 1530, 877, 1372, 3},
    {"P100", 1328, 715, 1328, 3},
};

#define IDLE_SM_MHZ    345u /* graphics/SM clock of an idle GPU */
#define IDLE_VIDEO_MHZ 765u
#define PCIE_WIDTH     16u
#define ENC_PERIOD_US  167000u /* encoder/decoder sampling period answered */

static const struct board *board_of(const kerf_sim_gpu_info *g)
{
        for (size_t i = 0; g->model && i < sizeof(boards) / sizeof(boards[0]); i++)
                if (strcmp(boards[i].model, g->model->name) == 0)
                        return &boards[i];
        return NULL;
}

nvmlReturn_t kerf__nvml_enter_dev(nvmlDevice_t d, const void *out, bool mig_ok,
                                  kerf_sim_gpu_info *g)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        if (!(r = kerf__nvml_dev_check(d, true, g))) {
                if (!out)
                        r = NVML_ERROR_INVALID_ARGUMENT;
                else if (d->gi >= 0 && !mig_ok)
                        r = NVML_ERROR_NOT_SUPPORTED;
        }
        if (r)
                kerf__nvml_leave();
        return r;
}

/* kerf__nvml_enter_dev for a query with a second output `out2`, checked after the first (a
 * NULL one: INVALID_ARGUMENT). */
static nvmlReturn_t enter_dev2(nvmlDevice_t d, const void *out, const void *out2, bool mig_ok,
                               kerf_sim_gpu_info *g)
{
        nvmlReturn_t r = kerf__nvml_enter_dev(d, out, mig_ok, g);
        if (!r && !out2)
                r = kerf__nvml_leave_r(NVML_ERROR_INVALID_ARGUMENT);
        return r;
}

/* ---- identity ------------------------------------------------------------------------------ */

/* A MIG device's index: its position in nvmlDeviceGetMigDeviceHandleByIndex's order (GIs by
 * id, then their CIs by id), so that call gives back the same handle. */
static nvmlReturn_t mig_index(nvmlDevice_t d, unsigned *ret)
{
        kerf_sim_gi_info gis[KERF_SIM_MAX_GIS];
        unsigned n = 0, k = 0;
        if (kerf_sim_gi_list(kerf__nvml_sim(), (unsigned)d->gpu, gis, KERF_SIM_MAX_GIS, &n) < 0)
                return NVML_ERROR_UNKNOWN;
        for (unsigned i = 0; i < n && i < KERF_SIM_MAX_GIS; i++)
                for (unsigned c = 0; c < gis[i].n_cis; c++, k++)
                        if ((int)gis[i].id == d->gi && (int)gis[i].cis[c].id == d->ci) {
                                *ret = k;
                                return NVML_SUCCESS;
                        }
        return NVML_ERROR_INVALID_ARGUMENT; /* destroyed meanwhile */
}

NVML_API nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = kerf__nvml_enter_dev(device, index, true, &g);
        if (r)
                return r;
        if (device->gi >= 0)
                return kerf__nvml_leave_r(mig_index(device, index));
        *index = g.index;
        return kerf__nvml_leave_r(NVML_SUCCESS);
}

NVML_API nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major,
                                                         int *minor)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = enter_dev2(device, major, minor, true, &g);
        if (r)
                return r;
        if (!g.model->cc_major)
                return kerf__nvml_leave_r(NVML_ERROR_NOT_SUPPORTED); /* an anonymised model */
        *major = (int)g.model->cc_major;
        *minor = (int)g.model->cc_minor;
        return kerf__nvml_leave_r(NVML_SUCCESS);
}

static nvmlDeviceArchitecture_t arch_of(const kerf_gpu_model *m)
{
        unsigned cc = m->cc_major * 10 + m->cc_minor;
        if (cc >= 100)
                return NVML_DEVICE_ARCH_BLACKWELL;
        if (cc >= 90)
                return NVML_DEVICE_ARCH_HOPPER;
        if (cc == 89)
                return NVML_DEVICE_ARCH_ADA;
        if (cc >= 80)
                return NVML_DEVICE_ARCH_AMPERE;
        if (cc == 75)
                return NVML_DEVICE_ARCH_TURING;
        if (cc >= 70)
                return NVML_DEVICE_ARCH_VOLTA;
        if (cc >= 60)
                return NVML_DEVICE_ARCH_PASCAL;
        return NVML_DEVICE_ARCH_UNKNOWN;
}

NVML_API nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device, nvmlDeviceArchitecture_t *arch)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = kerf__nvml_enter_dev(device, arch, true, &g);
        if (r)
                return r;
        *arch = arch_of(g.model);
        return kerf__nvml_leave_r(NVML_SUCCESS);
}

/* "Tesla ..." products report the Tesla brand, later datacenter parts "NVIDIA" [UNVERIFIED]. */
NVML_API nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t device, nvmlBrandType_t *type)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = kerf__nvml_enter_dev(device, type, true, &g);
        if (r)
                return r;
        *type = strncmp(g.model->product, "Tesla", 5) == 0 ? NVML_BRAND_TESLA : NVML_BRAND_NVIDIA;
        return kerf__nvml_leave_r(NVML_SUCCESS);
}

/* A made-up but stable 13-digit board serial: "1" + 12 digits hashed from the GPU uuid. */
NVML_API nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char *serial, unsigned int length)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = kerf__nvml_enter_dev(device, serial, false, &g);
        if (r)
                return r;
        uint64_t h = 1469598103934665603ULL; /* FNV-1a */
        for (const char *p = g.uuid; *p; p++)
                h = (h ^ (unsigned char)*p) * 1099511628211ULL;
        char buf[NVML_DEVICE_SERIAL_BUFFER_SIZE];
        snprintf(buf, sizeof(buf), "1%012llu", (unsigned long long)(h % 1000000000000ULL));
        return kerf__nvml_leave_r(kerf__nvml_copy_str(serial, length, buf));
}

/* Part number and VBIOS: made up, and say so ("KERFSIM-" part numbers). */
NVML_API nvmlReturn_t nvmlDeviceGetBoardPartNumber(nvmlDevice_t device, char *partNumber,
                                                   unsigned int length)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = kerf__nvml_enter_dev(device, partNumber, false, &g);
        if (r)
                return r;
        char buf[NVML_DEVICE_PART_NUMBER_BUFFER_SIZE];
        snprintf(buf, sizeof(buf), "KERFSIM-%s", g.model->name);
        return kerf__nvml_leave_r(kerf__nvml_copy_str(partNumber, length, buf));
}

NVML_API nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t device, char *version,
                                                unsigned int length)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = kerf__nvml_enter_dev(device, version, false, &g);
        if (r)
                return r;
        static const unsigned family[] = {
            [NVML_DEVICE_ARCH_PASCAL] = 0x86,   [NVML_DEVICE_ARCH_VOLTA] = 0x88,
            [NVML_DEVICE_ARCH_TURING] = 0x90,   [NVML_DEVICE_ARCH_AMPERE] = 0x92,
            [NVML_DEVICE_ARCH_ADA] = 0x95,      [NVML_DEVICE_ARCH_HOPPER] = 0x96,
            [NVML_DEVICE_ARCH_BLACKWELL] = 0x97};
        nvmlDeviceArchitecture_t a = arch_of(g.model);
        if (a >= sizeof(family) / sizeof(family[0]) || !family[a])
                return kerf__nvml_leave_r(NVML_ERROR_NOT_SUPPORTED);
        char buf[NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE];
        snprintf(buf, sizeof(buf), "%02X.00.00.00.01", family[a]);
        return kerf__nvml_leave_r(kerf__nvml_copy_str(version, length, buf));
}

/* SMs of a device: the model's, or a MIG device's share (profile SMs x CI slices / GI
 * slices, as the simulated libcuda reports it). 0 when unknown. */
static unsigned sms_of(nvmlDevice_t d, const kerf_sim_gpu_info *g, kerf_sim_gi_info *ret_gi,
                       unsigned *ret_ci)
{
        if (d->gi < 0)
                return g->model->sms;
        kerf_sim_gi_info gi;
        if (kerf_sim_gi_get(kerf__nvml_sim(), g->index, (unsigned)d->gi, &gi) < 0 || !gi.profile)
                return 0;
        for (unsigned c = 0; c < gi.n_cis; c++) {
                if ((int)gi.cis[c].id != d->ci)
                        continue;
                if (ret_gi)
                        *ret_gi = gi;
                if (ret_ci)
                        *ret_ci = c;
                unsigned slices = gi.profile->compute_slices ? gi.profile->compute_slices : 1;
                return gi.profile->sms * gi.cis[c].size / slices;
        }
        return 0;
}

/* CUDA cores: SMs x FP32 cores per SM of the architecture (64 on GP100/GV100/TU/GA100,
 * 128 elsewhere): H200 16896, A100 6912, T4 2560. */
NVML_API nvmlReturn_t nvmlDeviceGetNumGpuCores(nvmlDevice_t device, unsigned int *numCores)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = kerf__nvml_enter_dev(device, numCores, true, &g);
        if (r)
                return r;
        unsigned cc = g.model->cc_major * 10 + g.model->cc_minor;
        unsigned per_sm = (cc == 60 || (cc >= 70 && cc <= 80)) ? 64 : 128;
        unsigned sms = sms_of(device, &g, NULL, NULL);
        if (!sms || !cc)
                return kerf__nvml_leave_r(NVML_ERROR_NOT_SUPPORTED);
        *numCores = sms * per_sm;
        return kerf__nvml_leave_r(NVML_SUCCESS);
}

NVML_API nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t device, unsigned int *node)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = kerf__nvml_enter_dev(device, node, false, &g);
        if (r)
                return r;
        if (g.numa < 0)
                return kerf__nvml_leave_r(NVML_ERROR_NOT_SUPPORTED);
        *node = (unsigned)g.numa;
        return kerf__nvml_leave_r(NVML_SUCCESS);
}

/* MIG device handles only (NVML's note); engine counts from the GI profile, shared by its
 * compute instances. */
NVML_API nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t device,
                                                 nvmlDeviceAttributes_t *attributes)
{
        kerf_sim_gpu_info g;
        kerf_sim_gi_info gi;
        unsigned c = 0;
        nvmlReturn_t r = kerf__nvml_enter_dev(device, attributes, true, &g);
        if (r)
                return r;
        if (device->gi < 0)
                return kerf__nvml_leave_r(NVML_ERROR_NOT_SUPPORTED);
        unsigned sms = sms_of(device, &g, &gi, &c);
        if (!sms)
                return kerf__nvml_leave_r(NVML_ERROR_INVALID_ARGUMENT); /* destroyed meanwhile */
        const kerf_mig_profile *p = gi.profile;
        *attributes = (nvmlDeviceAttributes_t){.multiprocessorCount = sms,
                                               .sharedCopyEngineCount = p->copy_engines,
                                               .sharedDecoderCount = p->decoders,
                                               .sharedEncoderCount = p->encoders,
                                               .sharedJpegCount = p->jpegs,
                                               .sharedOfaCount = p->ofas,
                                               .gpuInstanceSliceCount = p->compute_slices,
                                               .computeInstanceSliceCount = gi.cis[c].size,
                                               .memorySizeMB = p->mem_mib};
        return kerf__nvml_leave_r(NVML_SUCCESS);
}

NVML_API nvmlReturn_t nvmlDeviceGetAttributes(nvmlDevice_t device,
                                              nvmlDeviceAttributes_t *attributes)
{
        return nvmlDeviceGetAttributes_v2(device, attributes);
}

/* ---- clocks and performance state ---------------------------------------------------------- */

/* The clock of `type` (current when !max: boost while busy, idle clocks otherwise; memory
 * stays at its maximum). */
static nvmlReturn_t clock_of(const kerf_sim_gpu_info *g, unsigned type, bool max, unsigned *ret)
{
        const struct board *b = board_of(g);
        if (type >= NVML_CLOCK_COUNT)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (!b)
                return NVML_ERROR_NOT_SUPPORTED;
        bool idle = !max && kerf__nvml_busy_pct(g) == 0;
        switch (type) {
        case NVML_CLOCK_GRAPHICS:
        case NVML_CLOCK_SM:
                *ret = idle ? IDLE_SM_MHZ : b->sm_mhz;
                break;
        case NVML_CLOCK_MEM:
                *ret = b->mem_mhz;
                break;
        default:
                *ret = idle && b->video_mhz > IDLE_VIDEO_MHZ ? IDLE_VIDEO_MHZ : b->video_mhz;
                break;
        }
        return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                             unsigned int *clock)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = kerf__nvml_enter_dev(device, clock, false, &g);
        return r ? r : kerf__nvml_leave_r(clock_of(&g, (unsigned)type, false, clock));
}

NVML_API nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                                unsigned int *clock)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = kerf__nvml_enter_dev(device, clock, false, &g);
        return r ? r : kerf__nvml_leave_r(clock_of(&g, (unsigned)type, true, clock));
}

/* Application clocks (target and default) and the customer boost clock are the maximum. */
NVML_API nvmlReturn_t nvmlDeviceGetClock(nvmlDevice_t device, nvmlClockType_t clockType,
                                         nvmlClockId_t clockId, unsigned int *clockMHz)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = kerf__nvml_enter_dev(device, clockMHz, false, &g);
        if (r)
                return r;
        if ((unsigned)clockId >= NVML_CLOCK_ID_COUNT)
                return kerf__nvml_leave_r(NVML_ERROR_INVALID_ARGUMENT);
        return kerf__nvml_leave_r(
            clock_of(&g, (unsigned)clockType, clockId != NVML_CLOCK_ID_CURRENT, clockMHz));
}

NVML_API nvmlReturn_t nvmlDeviceGetMaxCustomerBoostClock(nvmlDevice_t device,
                                                         nvmlClockType_t clockType,
                                                         unsigned int *clockMHz)
{
        return nvmlDeviceGetClock(device, clockType, NVML_CLOCK_ID_CUSTOMER_BOOST_MAX, clockMHz);
}

NVML_API nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t device, nvmlClockType_t clockType,
                                                     unsigned int *clockMHz)
{
        return nvmlDeviceGetClock(device, clockType, NVML_CLOCK_ID_APP_CLOCK_TARGET, clockMHz);
}

NVML_API nvmlReturn_t nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t device,
                                                            nvmlClockType_t clockType,
                                                            unsigned int *clockMHz)
{
        return nvmlDeviceGetClock(device, clockType, NVML_CLOCK_ID_APP_CLOCK_DEFAULT, clockMHz);
}

/* GpuIdle while nothing ran in the last second, else no reason: the simulation never
 * throttles. */
NVML_API nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                             unsigned long long *clocksEventReasons)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = kerf__nvml_enter_dev(device, clocksEventReasons, false, &g);
        if (r)
                return r;
        *clocksEventReasons = kerf__nvml_busy_pct(&g)
                                  ? (unsigned long long)nvmlClocksEventReasonNone
                                  : (unsigned long long)nvmlClocksEventReasonGpuIdle;
        return kerf__nvml_leave_r(NVML_SUCCESS);
}

NVML_API nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                                unsigned long long *reasons)
{
        return nvmlDeviceGetCurrentClocksEventReasons(device, reasons);
}

NVML_API nvmlReturn_t nvmlDeviceGetSupportedClocksEventReasons(nvmlDevice_t device,
                                                               unsigned long long *reasons)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = kerf__nvml_enter_dev(device, reasons, false, &g);
        if (r)
                return r;
        *reasons = (unsigned long long)(nvmlClocksEventReasonGpuIdle |
                                        nvmlClocksEventReasonApplicationsClocksSetting |
                                        nvmlClocksEventReasonSwPowerCap |
                                        nvmlClocksThrottleReasonHwSlowdown |
                                        nvmlClocksEventReasonSyncBoost |
                                        nvmlClocksEventReasonSwThermalSlowdown |
                                        nvmlClocksThrottleReasonHwThermalSlowdown |
                                        nvmlClocksThrottleReasonHwPowerBrakeSlowdown);
        return kerf__nvml_leave_r(NVML_SUCCESS);
}

NVML_API nvmlReturn_t nvmlDeviceGetSupportedClocksThrottleReasons(nvmlDevice_t device,
                                                                  unsigned long long *reasons)
{
        return nvmlDeviceGetSupportedClocksEventReasons(device, reasons);
}

/* P0 always: datacenter GPUs with persistence mode on stay in P0 [UNVERIFIED when idle]. */
NVML_API nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t *pState)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = kerf__nvml_enter_dev(device, pState, false, &g);
        if (r)
                return r;
        *pState = NVML_PSTATE_0;
        return kerf__nvml_leave_r(NVML_SUCCESS);
}

NVML_API nvmlReturn_t nvmlDeviceGetPowerState(nvmlDevice_t device, nvmlPstates_t *pState)
{
        return nvmlDeviceGetPerformanceState(device, pState);
}

/* ---- power --------------------------------------------------------------------------------- */

/* The model's power limit in mW; 0 when the model does not say. */
static unsigned limit_mw(const kerf_sim_gpu_info *g)
{
        return g->model->power_limit_w * 1000u;
}

/* enter_dev2 (board level) for a power query: NOT_SUPPORTED when the model has no limit. */
static nvmlReturn_t enter_power(nvmlDevice_t d, const void *out, const void *out2,
                                kerf_sim_gpu_info *g)
{
        nvmlReturn_t r = enter_dev2(d, out, out2, false, g);
        if (!r && !limit_mw(g))
                r = kerf__nvml_leave_r(NVML_ERROR_NOT_SUPPORTED);
        return r;
}

/* Enforced limit, management limit and default limit are all the model's limit (nothing can
 * change it in the simulation). */
static nvmlReturn_t power_limit(nvmlDevice_t device, unsigned *ret)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = enter_power(device, ret, ret, &g);
        if (r)
                return r;
        *ret = limit_mw(&g);
        return kerf__nvml_leave_r(NVML_SUCCESS);
}

NVML_API nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit)
{
        return power_limit(device, limit);
}

NVML_API nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int *limit)
{
        return power_limit(device, limit);
}

NVML_API nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device,
                                                               unsigned int *defaultLimit)
{
        return power_limit(device, defaultLimit);
}

/* [limit / 2, limit] [UNVERIFIED: the real minimum differs per board]. */
NVML_API nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device,
                                                                   unsigned int *minLimit,
                                                                   unsigned int *maxLimit)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = enter_power(device, minLimit, maxLimit, &g);
        if (r)
                return r;
        *minLimit = limit_mw(&g) / 2;
        *maxLimit = limit_mw(&g);
        return kerf__nvml_leave_r(NVML_SUCCESS);
}

NVML_API nvmlReturn_t nvmlDeviceGetPowerManagementMode(nvmlDevice_t device, nvmlEnableState_t *mode)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = kerf__nvml_enter_dev(device, mode, false, &g);
        if (r)
                return r;
        *mode = limit_mw(&g) ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
        return kerf__nvml_leave_r(NVML_SUCCESS);
}

/* mJ since the (simulated) driver loaded, taken as host boot: the idle draw (10% of the
 * limit) times the uptime. Monotonic and the same in every process; it carries no
 * information about the simulated work. */
NVML_API nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device,
                                                          unsigned long long *energy)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = enter_power(device, energy, energy, &g);
        if (r)
                return r;
        struct timespec ts;
        clock_gettime(CLOCK_BOOTTIME, &ts);
        unsigned long long ms =
            (unsigned long long)ts.tv_sec * 1000ULL + (unsigned long long)ts.tv_nsec / 1000000ULL;
        *energy = (unsigned long long)(limit_mw(&g) / 10u) * ms / 1000ULL;
        return kerf__nvml_leave_r(NVML_SUCCESS);
}

/* ---- fans, modes, ECC, BAR1 ---------------------------------------------------------------- */

/* Every simulated model is a passively cooled datacenter board: no fans to report. */
NVML_API nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int *speed)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = kerf__nvml_enter_dev(device, speed, false, &g);
        return r ? r : kerf__nvml_leave_r(NVML_ERROR_NOT_SUPPORTED);
}

NVML_API nvmlReturn_t nvmlDeviceGetFanSpeed_v2(nvmlDevice_t device, unsigned int fan,
                                               unsigned int *speed)
{
        (void)fan;
        return nvmlDeviceGetFanSpeed(device, speed);
}

NVML_API nvmlReturn_t nvmlDeviceGetNumFans(nvmlDevice_t device, unsigned int *numFans)
{
        return nvmlDeviceGetFanSpeed(device, numFans);
}

/* Answers a fixed enable state (a datacenter node: persistence on, no display). */
static nvmlReturn_t enable_state(nvmlDevice_t device, nvmlEnableState_t *ret, nvmlEnableState_t v)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = kerf__nvml_enter_dev(device, ret, false, &g);
        if (r)
                return r;
        *ret = v;
        return kerf__nvml_leave_r(NVML_SUCCESS);
}

NVML_API nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t *mode)
{
        return enable_state(device, mode, NVML_FEATURE_ENABLED);
}

NVML_API nvmlReturn_t nvmlDeviceGetDisplayMode(nvmlDevice_t device, nvmlEnableState_t *display)
{
        return enable_state(device, display, NVML_FEATURE_DISABLED);
}

NVML_API nvmlReturn_t nvmlDeviceGetDisplayActive(nvmlDevice_t device, nvmlEnableState_t *isActive)
{
        return enable_state(device, isActive, NVML_FEATURE_DISABLED);
}

NVML_API nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, nvmlComputeMode_t *mode)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = kerf__nvml_enter_dev(device, mode, false, &g);
        if (r)
                return r;
        *mode = NVML_COMPUTEMODE_DEFAULT;
        return kerf__nvml_leave_r(NVML_SUCCESS);
}

/* ECC on (current and pending) for every known model; no error counters are kept. */
NVML_API nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t *current,
                                           nvmlEnableState_t *pending)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = enter_dev2(device, current, pending, false, &g);
        if (r)
                return r;
        if (!board_of(&g))
                return kerf__nvml_leave_r(NVML_ERROR_NOT_SUPPORTED);
        *current = *pending = NVML_FEATURE_ENABLED;
        return kerf__nvml_leave_r(NVML_SUCCESS);
}

/* BAR1: the framebuffer rounded up to a power of two [UNVERIFIED per board]; 1 MiB in use,
 * plus 1 MiB per attached process. */
NVML_API nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t *bar1Memory)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = kerf__nvml_enter_dev(device, bar1Memory, false, &g);
        if (r)
                return r;
        unsigned long long total = 1ULL << 20;
        while (total < g.mem_total)
                total <<= 1;
        unsigned long long used = (1ULL + g.n_procs) << 20;
        *bar1Memory = (nvmlBAR1Memory_t){total, total - used, used};
        return kerf__nvml_leave_r(NVML_SUCCESS);
}

/* ---- PCIe ---------------------------------------------------------------------------------- */

/* The board's link at full speed (no idle downshift): generation or width. */
static nvmlReturn_t pcie(nvmlDevice_t device, unsigned *ret, bool width)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = kerf__nvml_enter_dev(device, ret, false, &g);
        if (r)
                return r;
        const struct board *b = board_of(&g);
        if (!b)
                return kerf__nvml_leave_r(NVML_ERROR_NOT_SUPPORTED);
        *ret = width ? PCIE_WIDTH : b->pcie_gen;
        return kerf__nvml_leave_r(NVML_SUCCESS);
}

NVML_API nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device,
                                                          unsigned int *currLinkGen)
{
        return pcie(device, currLinkGen, false);
}

NVML_API nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device,
                                                         unsigned int *maxLinkGen)
{
        return pcie(device, maxLinkGen, false);
}

NVML_API nvmlReturn_t nvmlDeviceGetGpuMaxPcieLinkGeneration(nvmlDevice_t device,
                                                            unsigned int *maxLinkGenDevice)
{
        return pcie(device, maxLinkGenDevice, false);
}

NVML_API nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device,
                                                     unsigned int *currLinkWidth)
{
        return pcie(device, currLinkWidth, true);
}

NVML_API nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int *maxLinkWidth)
{
        return pcie(device, maxLinkWidth, true);
}

/* ---- video engines -------------------------------------------------------------------------- */

/* No video work is simulated: 0% over a 167 ms sampling period. */
static nvmlReturn_t video_util(nvmlDevice_t device, unsigned *util, unsigned *period)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = enter_dev2(device, util, period, false, &g);
        if (r)
                return r;
        *util = 0;
        *period = ENC_PERIOD_US;
        return kerf__nvml_leave_r(NVML_SUCCESS);
}

NVML_API nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device,
                                                      unsigned int *utilization,
                                                      unsigned int *samplingPeriodUs)
{
        return video_util(device, utilization, samplingPeriodUs);
}

NVML_API nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t device,
                                                      unsigned int *utilization,
                                                      unsigned int *samplingPeriodUs)
{
        return video_util(device, utilization, samplingPeriodUs);
}
