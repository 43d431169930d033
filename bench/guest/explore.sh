# --explore (both benches): after the set-up, a shell on the third serial port (a socket on the
# host: GuestShell sends it commands), instead of the phases.
say explore-shell
while true; do sh -i < /dev/ttyS2 > /dev/ttyS2 2>&1; done
