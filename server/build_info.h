/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * build_info — the version and build the Makefile passes with -D, with
 * defaults for a build without them. Constants only.
 */
#ifndef SPLITKD_BUILD_INFO_H
#define SPLITKD_BUILD_INFO_H

#ifndef SPLITKD_VERSION
#define SPLITKD_VERSION "0.0.0"
#endif
#ifndef SPLITKD_BUILD
#define SPLITKD_BUILD "unknown"
#endif

#endif /* SPLITKD_BUILD_INFO_H */
