/*
 * The exploration bookkeeping both tuners share (issue 31): the
 * neighbourhood tuner (coll/neighbor/tune.c) and the global collectives'
 * (coll/global/gcoll_tune.c) time their candidates in rounds, cut the ones
 * clearly behind after round 0, bound what exploring costs and decide by
 * the slowest process's time; this file does that for both, and reads,
 * shares and writes the tuning file (MPITOPO_TUNING_FILE), in which each
 * tuner owns one section. Imports nothing of either tuner.
 *
 *   round 0: every candidate once; one allreduce (MPI_MAX: the slowest
 *     process's time) and candidates slower than MPITOPO__EXPLORE_EARLY
 *     times the best stop there; then the budget: what round 0 spent on
 *     slower candidates plus what the remaining rounds would spend (their
 *     round-0 excess over the best, once a round), with the reductions,
 *     must stay within MPITOPO__EXPLORE_BUDGET of MPITOPO__EXPLORE_HORIZON
 *     calls of the best, else the slowest remaining candidates stop too;
 *   rounds 1 .. REPS-1: every remaining candidate once per round; one
 *     allreduce (MPI_MAX) of those times at the end;
 *   the decision: the candidate of least median of the slowest process's
 *     times; slot 0 (the model's choice) stays unless another is more than
 *     MPITOPO__EXPLORE_KEEP faster.
 *
 * A trial that failed on a process is recorded as MPITOPO__EXPLORE_FAILED
 * seconds (the rounds stay in step): its candidate is stopped everywhere,
 * and round 0's budget does not count it.
 *
 * Every process holds the same maxima, hence takes the same decision.
 */
#ifndef MPITOPO_COLL_ENGINE_EXPLORE_H
#define MPITOPO_COLL_ENGINE_EXPLORE_H

#include <mpi.h>
#include <stddef.h>

#define MPITOPO__EXPLORE_MAXC 16      /* candidates of one signature at most */
#define MPITOPO__EXPLORE_REPS 3       /* trials of every candidate not stopped */
#define MPITOPO__EXPLORE_EARLY 1.5    /* after round 0: slower than this times the best stops */
#define MPITOPO__EXPLORE_BUDGET 0.10  /* exploration: at most this share of ... */
#define MPITOPO__EXPLORE_HORIZON 100  /* ... this many calls of the best candidate */
#define MPITOPO__EXPLORE_KEEP 0.01    /* the model's choice stays within this of the best */
#define MPITOPO__EXPLORE_FAILED 1e30  /* the seconds of a trial that failed on a process */

/* The exploration of one signature. */
typedef struct mpitopo__explore {
    int ncand;
    int alive[MPITOPO__EXPLORE_MAXC];
    int round, pos;
    int explored; /* calls run for the exploration (warm-up runs included) */
    double t[MPITOPO__EXPLORE_REPS][MPITOPO__EXPLORE_MAXC]; /* seconds; -1: not run */
    double med[MPITOPO__EXPLORE_MAXC]; /* after the decision: the medians (stopped: round 0) */
} mpitopo__explore_t;

/* A fresh exploration of ncand (1 .. MAXC) candidates. */
void mpitopo__explore_init(mpitopo__explore_t *x, int ncand);

/* The slot of the candidate the next exploring call runs. */
int mpitopo__explore_next(mpitopo__explore_t *x);

/* The values one round's reduction carries, at most. */
#define MPITOPO__EXPLORE_PACK                                                                    \
    ((MPITOPO__EXPLORE_REPS - 1) * MPITOPO__EXPLORE_MAXC > MPITOPO__EXPLORE_MAXC + 1            \
         ? (MPITOPO__EXPLORE_REPS - 1) * MPITOPO__EXPLORE_MAXC                                   \
         : MPITOPO__EXPLORE_MAXC + 1)

/*
 * The steps of mpitopo__explore_record, for a caller that reduces without
 * blocking (a persistent request's exploration, coll/neighbor/tune.c):
 * _note records this process's seconds of candidate slot and returns 1
 * when a reduction is due; _pack puts its values (red_in: the seconds of
 * this process's previous reduction) into buf (MPITOPO__EXPLORE_PACK
 * doubles) and returns their count; _apply takes their maxima over the
 * processes (MPI_MAX) and returns the slot decided, or -1. Every process
 * must pack and apply the same rounds.
 */
int mpitopo__explore_note(mpitopo__explore_t *x, int slot, double seconds);
int mpitopo__explore_pack(const mpitopo__explore_t *x, double red_in, double *buf);
int mpitopo__explore_apply(mpitopo__explore_t *x, const double *mx);

/*
 * The timed call of candidate slot took seconds on this process: record
 * it; at the end of a round, one allreduce (MPI_MAX) over comm, collective
 * as the tuned call is. red_in: the seconds of this process's previous
 * reduction of the tuner (the budget counts it); *red_out: this one's.
 * *decided: the slot decided (x->med then holds the medians), or -1.
 * Returns an MPI error code.
 */
int mpitopo__explore_record(mpitopo__explore_t *x, int slot, double seconds, MPI_Comm comm,
                            double red_in, double *red_out, int *decided);

/* MPITOPO_TUNE (0: off) and MPITOPO_TUNING_FILE (NULL: none), read once. */
int mpitopo__explore_on(void);
const char *mpitopo__explore_path(void);

/* The tuning file's text on every process of comm (rank 0 reads it; two
 * broadcasts; collective). *text NULL: none, and why[] says why (empty when
 * the file does not exist yet). Returns an MPI error code. */
int mpitopo__tunefile_share(MPI_Comm comm, char **text, char *why, size_t len);

/* The whole file at path (NUL-terminated), or NULL with why[]. */
char *mpitopo__tunefile_slurp(const char *path, char *why, size_t len);

#ifdef MPITOPO_HAVE_JSONC
#include <json-c/json.h>
/*
 * The root object of a tuning file of host MPI `host` parsed from text, or
 * NULL with why[] (not JSON, not a tuning file, another host MPI). The
 * caller puts it.
 */
json_object *mpitopo__tunefile_parse(const char *text, const char *host, char *why, size_t len);
/*
 * Rank 0's write at MPI_Finalize: the file at the tuning path with
 * section `key` replaced by list (taken), the other sections of the file
 * as they are (when it is one of host's), written atomically (temporary
 * file, rename); ndecisions for the verbose line.
 */
void mpitopo__tunefile_write(const char *key, json_object *list, const char *host, int ndecisions);
/*
 * A section's entries to write (a new array): the earlier entries (old,
 * nold of elt bytes) that no decision of this job has the key of (same),
 * then this job's decisions (job, njob), the last of equal keys. json
 * makes the object of an entry: j its index in job, -1 for an earlier one.
 */
json_object *mpitopo__tunefile_merge(const void *old, int nold, const void *job, int njob, size_t elt,
                                     int (*same)(const void *a, const void *b),
                                     json_object *(*json)(const void *entry, int j));
#endif

#endif
