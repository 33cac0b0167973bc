/* SPDX-License-Identifier: Apache-2.0 */
/* poc_sw.c - SW1-SW4 (being written) */
#include "poc.h"
void poc_sw1(poc_ctx *p)
{
        (void)p;
}
void poc_sw2(poc_ctx *p)
{
        (void)p;
}
void poc_sw3(poc_ctx *p)
{
        (void)p;
}
void poc_sw4(poc_ctx *p)
{
        (void)p;
}
