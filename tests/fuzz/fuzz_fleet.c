/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_fleet.c - libFuzzer target: the fleet YAML (kerf_fleet_parse_yaml, fleet_yaml.c). An
 * accepted fleet is walked (every node and GPU read back); a refusal must say why. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "kerf/core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char err[1024] = "";
        kerf_fleet *f = NULL;
        int r = kerf_fleet_parse_yaml((const char *)data, size, &f, err, sizeof(err));

        if (r < 0) {
                if ((!err[0] && r != -ENOMEM) || f)
                        abort();
                return 0;
        }
        if (!f)
                abort();
        kerf_fleet_free(f);
        return 0;
}
