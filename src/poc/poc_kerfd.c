/* SPDX-License-Identifier: Apache-2.0 */
/* poc_kerfd.c - placeholder: replaced by its owner before anything is merged to main */
#include "poc.h"
