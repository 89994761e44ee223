#ifndef MPITOPO_EXPORT_H
#define MPITOPO_EXPORT_H
#ifndef MPITOPO_INSIDE_H_
#error Please include <mpitopo.h> instead of <mpitopo/export.h>
#endif

/*
 * MPITOPO_API marks every function of the public API. The library is built
 * with hidden visibility, so only what carries this mark leaves the shared
 * object; the mpitopo__* internals stay inside. For a program including the
 * header the mark only restates the default visibility, so it changes nothing
 * there. A consumer may define MPITOPO_API itself before including
 * <mpitopo.h> (to nothing, say) for a compiler without the attribute.
 */
#ifndef MPITOPO_API
#if defined(__GNUC__) && __GNUC__ >= 4
#define MPITOPO_API __attribute__((visibility("default")))
#else
#define MPITOPO_API
#endif
#endif

#endif /* MPITOPO_EXPORT_H */
