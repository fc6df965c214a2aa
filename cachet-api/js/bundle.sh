#!/bin/sh
# Builds the bundler-free files in trunk's staging directory (a post_build hook of Trunk.toml):
#   cachet/cachet-api.bundle.js       the wasm-bindgen glue of cachet-api and js/cachet-api.js, in one function
#   cachet/client-injector.bundle.js  registers the Service Worker
#   cachet/devtools.js                the devtools panel for plain pages (on window.cachet)
#   plain-page/index.html             the example page (examples/plain-page)
# trunk built the glue and the wasm into cachet/ (data-target-path="cachet").
set -eu
here=$(dirname "$0")
out="$TRUNK_STAGING_DIR/cachet"
{
  printf '(function () {\n'
  cat "$out/cachet-api.js"
  printf '\n'
  cat "$here/cachet-api.js"
  printf '})();\n'
} > "$out/cachet-api.bundle.js"
rm "$out/cachet-api.js"
cp "$here/client-injector.bundle.js" "$out/client-injector.bundle.js"
cp "$here/devtools.js" "$out/devtools.js"
mkdir -p "$TRUNK_STAGING_DIR/plain-page"
cp "$here/../../examples/plain-page/index.html" "$TRUNK_STAGING_DIR/plain-page/index.html"
