/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * embedded — files compiled into the binary by scripts/embed.sh: the
 * default catalog (api/catalog.json), the OpenAPI description
 * (api/openapi.json) and the page's three files (api/ui/). Read-only;
 * each is followed by a NUL not counted in its length.
 */
#ifndef SPLITKD_EMBEDDED_H
#define SPLITKD_EMBEDDED_H

#include <stddef.h>

extern const char embedded_catalog_json[];
extern const size_t embedded_catalog_json_len;
extern const char embedded_openapi_json[];
extern const size_t embedded_openapi_json_len;
extern const char embedded_ui_index_html[];
extern const size_t embedded_ui_index_html_len;
extern const char embedded_ui_app_js[];
extern const size_t embedded_ui_app_js_len;
extern const char embedded_ui_style_css[];
extern const size_t embedded_ui_style_css_len;

#endif /* SPLITKD_EMBEDDED_H */
