/* meta_keys.h - the one spelling of every member name of a profile's
 * metadata: the JSON object of the file header (formats/prof-format.md
 * section 4), with the "import" object the importers add
 * (formats/kineto-import.md, nsys-import.md) and the tag compare reads
 * (batch_size). MK_NAME is "name", nested members included (clock's
 * source, a device's index): the writers (src/record/meta.c, cupti.c,
 * gpu.c, src/import/sink_meta.c) and every reader (the model, the
 * analysis, the views, the commands) spell them through here, so that a
 * writer and a reader cannot disagree on one.
 *
 * tests/cli/report_keys.sh keeps this list true: each name is a field of
 * those documents, the writers write no member but these, and no key
 * literal in src/ or cmd/ spells one of them but through this header. One
 * define a line, in order; nothing else. */
#ifndef PROF_FORMAT_META_KEYS_H
#define PROF_FORMAT_META_KEYS_H

#define MK_ACTIVE                         "active"
#define MK_API_CALLS                      "api_calls"
#define MK_ARGV                           "argv"
#define MK_BATCH_SIZE                     "batch_size"
#define MK_BUFFER_BYTES                   "buffer_bytes"
#define MK_CLAMPED                        "clamped"
#define MK_CLOCK                          "clock"
#define MK_CONFIG                         "config"
#define MK_COPIES                         "copies"
#define MK_COUNTS                         "counts"
#define MK_CUDA                           "cuda"
#define MK_CUPTI_BUILT_FOR                "cupti_built_for"
#define MK_CUPTI_CLOCK_OFFSET_NS          "cupti_clock_offset_ns"
#define MK_CUPTI_VERSION                  "cupti_version"
#define MK_DAMAGED                        "damaged"
#define MK_DEVICES                        "devices"
#define MK_FACTS                          "facts"
#define MK_FILE                           "file"
#define MK_FLUSH_INTERVAL_MS              "flush_interval_ms"
#define MK_FORMAT                         "format"
#define MK_HOST                           "host"
#define MK_HOST_MEMORY_BYTES              "host_memory_bytes"
#define MK_IMPORT                         "import"
#define MK_INDEX                          "index"
#define MK_KERNELS                        "kernels"
#define MK_LIBPROF_VERSION                "libprof_version"
#define MK_LOCAL_RANK                     "local_rank"
#define MK_MARKS                          "marks"
#define MK_MEMORY_BYTES                   "memory_bytes"
#define MK_MEMORY_INTERVAL_MS             "memory_interval_ms"
#define MK_MEMORY_SAMPLES                 "memory_samples"
#define MK_MEMSETS                        "memsets"
#define MK_NAME                           "name"
#define MK_NVTX                           "nvtx"
#define MK_ORIGIN_EPOCH_NS                "origin_epoch_ns"
#define MK_ORIGIN_MONOTONIC_NS            "origin_monotonic_ns"
#define MK_OUTPUT                         "output"
#define MK_PID                            "pid"
#define MK_RANK                           "rank"
#define MK_REASON                         "reason"
#define MK_REGIONS                        "regions"
#define MK_REORDERED                      "reordered"
#define MK_REPEAT                         "repeat"
#define MK_REQUESTED                      "requested"
#define MK_SAMPLE_RATE                    "sample_rate"
#define MK_SCHEDULE                       "schedule"
#define MK_SKIPPED                        "skipped"
#define MK_SKIPPED_CATEGORIES             "skipped_categories"
#define MK_SOURCE                         "source"
#define MK_START_EPOCH_NS                 "start_epoch_ns"
#define MK_STEPS                          "steps"
#define MK_SYNCS                          "syncs"
#define MK_TAGS                           "tags"
#define MK_TSC_HZ                         "tsc_hz"
#define MK_UNKNOWN                        "unknown"
#define MK_UNKNOWN_CATEGORIES             "unknown_categories"
#define MK_UNPLACED                       "unplaced"
#define MK_WAIT                           "wait"
#define MK_WARMUP                         "warmup"
#define MK_WORLD_SIZE                     "world_size"

#endif
