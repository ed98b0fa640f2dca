#!/bin/sh
# Starts a private PulseAudio daemon for manual tests (what PulseTestServer does for XCTest):
# a float32 48 kHz stereo null sink "agtest" on a private socket, a 5 ms monitor reader that keeps
# the sink's latency low, and prints the PULSE_SERVER line to export. Stop it with Ctrl-C.
#   Tests/scripts/pulse-test-server.sh        then, in another shell:
#   export PULSE_SERVER=unix:/tmp/ag-pulse-XXXX/native; audiograph devices
set -eu
dir=$(mktemp -d /tmp/ag-pulse-XXXX)
export HOME="$dir" XDG_RUNTIME_DIR="$dir" PULSE_RUNTIME_PATH="$dir" XDG_CONFIG_HOME="$dir/config"
unset PULSE_SERVER DBUS_SESSION_BUS_ADDRESS DISPLAY || true
pulseaudio -n -F /dev/null --daemonize=no --exit-idle-time=-1 --disallow-exit --use-pid-file=no \
    --system=false --log-target=stderr \
    --load="module-null-sink sink_name=agtest format=float32le rate=48000 channels=2 norewinds=1" \
    --load="module-native-protocol-unix socket=$dir/native auth-anonymous=1" 2>"$dir/daemon.log" &
daemon=$!
cleanup() { kill "$keeper" 2>/dev/null || true; kill "$daemon" 2>/dev/null || true; wait "$daemon" 2>/dev/null || true; rm -rf "$dir"; }
keeper=
trap cleanup EXIT INT TERM
export PULSE_SERVER="unix:$dir/native"
i=0
until pactl info >/dev/null 2>&1; do
    i=$((i + 1)); [ "$i" -lt 100 ] || { cat "$dir/daemon.log" >&2; exit 1; }
    sleep 0.05
done
parec --device=agtest.monitor --format=float32le --rate=48000 --channels=2 --raw --latency-msec=5 /dev/null &
keeper=$!
sleep 0.3
pactl suspend-sink agtest 1; pactl suspend-sink agtest 0
echo "export PULSE_SERVER=$PULSE_SERVER"
wait "$daemon"
