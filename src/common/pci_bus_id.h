/* SPDX-License-Identifier: Apache-2.0 */
/* pci_bus_id.h - parsing a PCI bus id, as the simulated libcuda (cuDeviceGetByPCIBusId) and
 * libnvidia-ml (nvmlDeviceGetHandleByPciBusId) accept it */
#ifndef KERF_PCI_BUS_ID_H
#define KERF_PCI_BUS_ID_H

#include <stdbool.h>
#include <stdio.h>

/* Parses "domain:bus:device.function" or "bus:device.function" (hex, any case, nothing after;
 * the short form has domain 0). Returns false when `s` is neither. */
static inline bool kerf_pci_bus_id_parse(const char *s, unsigned *dom, unsigned *bus, unsigned *dev,
                                         unsigned *fn)
{
        char end;
        if (sscanf(s, "%x:%x:%x.%x%c", dom, bus, dev, fn, &end) == 4)
                return true;
        *dom = 0;
        return sscanf(s, "%x:%x.%x%c", bus, dev, fn, &end) == 3;
}

#endif /* KERF_PCI_BUS_ID_H */
