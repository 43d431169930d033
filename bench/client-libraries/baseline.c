/* The floor: a C process that does nothing, linked with neither library. */
#include <stdio.h>
#include <unistd.h>

int main(void) {
    printf("READY\n");
    fflush(stdout);
    for (;;) pause();
}
