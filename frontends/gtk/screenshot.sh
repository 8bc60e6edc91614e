#!/bin/sh
# Refreshes frontends/gtk/screenshot.png and screenshot-de.png, the pictures
# of elicit-gtk for the README and docs/frontends.md: the GTK end-to-end test that fills in a contact form under a
# private Xvfb captures the window (ImageMagick's `import`) and, with
# ELICIT_GTK_SCREENSHOT set, copies the capture here.
#
# Needs what the tests need: libgtk-4-dev, xvfb, dbus, at-spi2-core,
# python3-pyatspi, xdotool, imagemagick.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
cargo build --workspace --bins
ELICIT_GTK_SCREENSHOT="$root/frontends/gtk/screenshot.png" \
    cargo test -p elicit-tests --test gtk -- --exact forms_wait_in_one_window_and_a_screenshot_is_taken
echo "wrote $root/frontends/gtk/screenshot.png"
# The same window in German (needs the de_DE.UTF-8 locale; tests/setup
# generates it).
ELICIT_GTK_SCREENSHOT_DE="$root/frontends/gtk/screenshot-de.png" \
    cargo test -p elicit-tests --test gtk -- --exact a_german_form_is_captured
echo "wrote $root/frontends/gtk/screenshot-de.png"
