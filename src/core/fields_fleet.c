/* SPDX-License-Identifier: Apache-2.0 */
/* fields_fleet.c - the descriptors of the fleet file's keys (kerf/fields_fleet.h) */
#include "kerf/fields_fleet.h"

#include "kerf/core.h"

static const char *model_value(unsigned i)
{
        const kerf_gpu_model *m = kerf_gpu_model_at(i);
        return m ? m->name : NULL;
}

/* a model name, product name or alias (case-insensitive) -> its index in the model table */
static int model_parse(const char *s)
{
        return kerf_gpu_model_index(kerf_gpu_model_find(s));
}

/* the longest `cuda` text the version forms take: 7 digits, ".", 2 decimals */
#define CUDA_TEXT_MAX 10

#define TOK   KERF_FIELD_TOKEN
#define MILLI KERF_FIELD_MILLI
/* a key of the fleet file: no CLI flag, no API object */
#define K(name, type, min, max, def, help, flags)                                                  \
        {                                                                                          \
                name, type, min, max, def, help, NULL, NULL, 0, flags, NULL, NULL                  \
        }

const kerf_field kerf_fleet_doc_fields[] = {
    K("nodes", KERF_FIELD_STRLIST, 1, 0, "required", "the node entries", 0),
};
const size_t kerf_fleet_doc_fields_count =
    sizeof(kerf_fleet_doc_fields) / sizeof(kerf_fleet_doc_fields[0]);

/* A default that is a value of the key's type is the one the reader applies. */
const kerf_field kerf_fleet_node_fields[] = {
    K("name", KERF_FIELD_STRING, 1, KERF_NAME_LEN - 1, "required", "node name, unique in the fleet",
      TOK),
    K("count", KERF_FIELD_INT, 1, KERF_MAX_NODE_REPLICAS, "1",
      "replicate this node: replicas are named `<name>-0`, `<name>-1`, ...", 0),
    K("cpus", KERF_FIELD_INT, 0, (int64_t)KERF_MAX_CPU_MILLI, "0",
      "host CPUs, 0: not accounted (stored in thousandths: `0.5` is 500)", MILLI),
    K("cpu_milli", KERF_FIELD_INT, 0, (int64_t)KERF_MAX_CPU_MILLI, "0",
      "the same in thousandths; give `cpus` or `cpu_milli`, not both", 0),
    K("memory", KERF_FIELD_SIZE, 0, (int64_t)KERF_MAX_MEM_BYTES, "0",
      "host memory, 0: not accounted (see *Byte sizes*)", 0),
    K("driver", KERF_FIELD_STRING, 1, (int64_t)sizeof(((kerf_node_desc *)0)->driver_version) - 1,
      "unknown", "NVIDIA driver version such as `550.54.15`", TOK),
    K("cuda", KERF_FIELD_STRING, 1, CUDA_TEXT_MAX, "0 (unknown)",
      "CUDA driver version: `\"12.4\"`, `12` or NVML's `12040` (stored as 12040)", TOK),
    K("gpus", KERF_FIELD_STRLIST, 0, KERF_MAX_NODE_GPUS, "none",
      "the node's GPU entries (below); a node may have none", 0),
};
const size_t kerf_fleet_node_fields_count =
    sizeof(kerf_fleet_node_fields) / sizeof(kerf_fleet_node_fields[0]);

const kerf_field kerf_fleet_gpu_fields[] = {
    {"model", KERF_FIELD_ENUM, 0, KERF_MAX_GPU_MODELS - 1, "required",
     "a model name or alias from the model table, case-insensitive", NULL, NULL, 0, 0, model_value,
     model_parse},
    K("count", KERF_FIELD_INT, 1, KERF_MAX_NODE_GPUS, "1", "how many GPUs this entry adds", 0),
    K("mig", KERF_FIELD_BOOL, 0, 1, "false", "MIG mode is on in hardware (MIG-capable models only)",
      0),
    K("numa", KERF_FIELD_INT, -1, KERF_MAX_NUMA_NODE, "-1",
      "NUMA node the GPUs hang off, -1: unknown", 0),
    K("nvlink", KERF_FIELD_STRING, 1, KERF_NVLINK_LABEL_LEN - 1, "none",
      "the node's GPUs with the same label are NVLink peers of each other", 0),
    K("uuid", KERF_FIELD_STRING, 5, KERF_UUID_LEN - 1, "derived",
      "the GPU's real UUID, `GPU-...`; only with `count: 1` in a node without `count`", TOK),
};
const size_t kerf_fleet_gpu_fields_count =
    sizeof(kerf_fleet_gpu_fields) / sizeof(kerf_fleet_gpu_fields[0]);
