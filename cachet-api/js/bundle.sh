#!/bin/sh
# Builds the bundler-free files in trunk's staging directory (a post_build hook of Trunk.toml):
#   cachet/cachet-api.bundle.js       the page client's JavaScript helpers (cachet-client/js/*.js) as the
#                                     object cachetPage, the wasm-bindgen glue of cachet-api and
#                                     js/cachet-api.js, in one function
#   cachet/client-injector.bundle.js  registers the Service Worker
#   cachet/devtools.js                the devtools panel for plain pages (on window.cachet)
#   plain-page/index.html             the example page (examples/plain-page)
# trunk built the glue and the wasm into cachet/ (data-target-path="cachet").
set -eu
here=$(dirname "$0")
out="$TRUNK_STAGING_DIR/cachet"
pages="$here/../../cachet-client/js"
# Every `export function` / `export async function` of cachet-client's js/*.js, which the glue calls as
# cachetPage.NAME (cachet-client's cargo feature `no-modules`).
names=$(cat "$pages"/*.js | sed -n 's/^export \(async \)\{0,1\}function \([A-Za-z0-9_]*\).*/\2/p' | paste -sd, -)
{
  printf '(function () {\n'
  printf 'var cachetPage = (function () {\n'
  cat "$pages"/*.js | sed -e 's/^export //' -e '/^\/\/ See cachet-client/d'
  printf 'return { %s };\n})();\n' "$names"
  cat "$out/cachet-api.js"
  printf '\n'
  cat "$here/cachet-api.js"
  printf '})();\n'
} > "$out/cachet-api.bundle.js"
rm "$out/cachet-api.js"
# The bundle holds the helpers: snippets trunk copied beside the API from the app's wasm-bindgen output
# (one output directory for every rust link of index.html) are not the API's.
rm -rf "$out/snippets"
cp "$here/client-injector.bundle.js" "$out/client-injector.bundle.js"
cp "$here/devtools.js" "$out/devtools.js"
mkdir -p "$TRUNK_STAGING_DIR/plain-page"
cp "$here/../../examples/plain-page/index.html" "$TRUNK_STAGING_DIR/plain-page/index.html"
