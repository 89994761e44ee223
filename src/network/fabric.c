/* Fabrics read from files: placeholder until the importer lands (issue 16). */
#include "network/network_internal.h"

#include <stdio.h>

int mpitopo__fabric_route(const mpitopo_network_t *net, int src, int dst, int64_t *ch)
{
    (void)net, (void)src, (void)dst, (void)ch;
    return 0;
}
void mpitopo__fabric_channel_name(const mpitopo_network_t *net, int64_t ch, char *name, size_t size)
{
    (void)net;
    snprintf(name, size, "c%lld", (long long)ch);
}
void mpitopo__fabric_node_name(const mpitopo_network_t *net, int node, char *name, size_t size)
{
    (void)net;
    snprintf(name, size, "n%d", node);
}
void mpitopo__fabric_free(mpitopo_network_t *net) { (void)net; }
