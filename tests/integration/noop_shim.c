/* SPDX-License-Identifier: Apache-2.0 */
/* noop_shim.c - a preloadable library that does nothing: kerfd is pointed at it
 * (KERFD_TEST_SHIM_PATH) to treat slices as enforced where the test needs only the region
 * (suspend flags, bypass detection), whether or not the real shim is built. */
int kerf_it_noop_shim;
