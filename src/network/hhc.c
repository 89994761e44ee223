/* HHC networks: placeholder until the HHC model lands (issue 16). */
#include "network/network_internal.h"

#include <stdio.h>

int mpitopo__hhc_parse(const char *desc, const char *s, size_t len, mpitopo_network_t *net)
{
    (void)s;
    (void)len;
    (void)net;
    return MPITOPO_FAIL_AS(MPITOPO_ERR_PARSE, "mpitopo_network_from_string",
                           "desc = \"%.200s\": hhc is not available yet", desc);
}
int mpitopo__hhc_route(const mpitopo_network_t *net, int src, int dst, int64_t *ch)
{
    (void)net, (void)src, (void)dst, (void)ch;
    return 0;
}
void mpitopo__hhc_channel_name(const mpitopo_network_t *net, int64_t ch, char *name, size_t size)
{
    (void)net;
    snprintf(name, size, "c%lld", (long long)ch);
}
void mpitopo__hhc_node_name(const mpitopo_network_t *net, int node, char *name, size_t size)
{
    (void)net;
    snprintf(name, size, "n%d", node);
}
void mpitopo__hhc_free(mpitopo_network_t *net) { (void)net; }
