#include <mpitopo.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    int major;
    const char *v = mpitopo_get_version(&major, NULL, NULL);
    mpitopo_machine_t *m = NULL;
    int n = 0;
    if (strcmp(v, MPITOPO_VERSION_STRING) || major != MPITOPO_VERSION_MAJOR ||
        mpitopo_machine_from_string("node:2 core:2", &m) || mpitopo_machine_nleaves(m, &n) || n != 4) {
        printf("FAIL consumer\n");
        return 1;
    }
    mpitopo_machine_destroy(&m);
    printf("PASS consumer %s\n", v);
    return 0;
}
