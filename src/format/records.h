/* records.h - the fields of every record, in the order they are stored
 * (format §6.1): the one description of records from which the encoder
 * (pf_put_* in encode.c) and the decoder (reader_decode.c) are generated,
 * so that adding a field, or a record, is one edit here.
 *
 * PF_RECORDS(X) calls X(NAME, TAG, LAST, ROLE, EVENT, WHAT, FIELDS) once
 * per record:
 *   NAME    the encoder is pf_put_NAME; a definition's decoder def_NAME
 *   TAG     its tag; LAST the last of a run of tags (a region's tag is
 *           PF_TAG_REGION + its kind), else TAG again
 *   ROLE    EVENT: a timed record, counted as an event (format §7.1);
 *           DEF: a definition, which the reader applies (def_NAME)
 *   EVENT   the prof_event_type it is handed out as; 0: kept by the reader
 *   WHAT    what error messages call a malformed one
 *   FIELDS  a macro that calls F(KIND, PARAM, MEMBER) per field, in order
 *
 * Field kinds: the encoder's parameter, then the bytes stored.
 *   U32    uint32_t     a varint whose value fits 32 bits ("varint32")
 *   U64    uint64_t     a varint
 *   DT     uint64_t     the start time, as the varint of the zigzag delta from
 *                       the block's time cursor (§6.2)
 *   DUR    uint64_t     a duration, varint; the cursor then moves to the
 *                       record's end, start + duration
 *   F64    double       IEEE 754 binary64, 8 bytes little-endian
 *   DROPS  uint64_t     a varint count of dropped events, summed into the
 *                       block's (and so the footer's) dropped total
 *   TEXT   const char *, size_t   a varint length, then the bytes; the
 *                       encoder cuts them at PF_STRING_MAX
 *   CSTR   const char * the same, from a NUL-terminated string (NULL: none)
 *   KIND   uint32_t     no bytes: the offset of the record's tag from TAG
 *   SPAN   (none)       a varint length of the fields after it, so that a
 *                       later minor version can append fields readers skip
 * PARAM names the encoder's parameter (and the decoder's variable); MEMBER
 * the prof_event field an EVENT hands the value out in (DEF: unused, _).
 *
 * String ids and thread indexes of definitions are read as U64: the reader
 * checks them against the narrower limits of §9 itself, with messages that
 * name the value read.
 */
#ifndef PROF_FORMAT_RECORDS_H
#define PROF_FORMAT_RECORDS_H

#define PF_FIELDS_STRING(F) F(U64, id, _) F(TEXT, text, _)
#define PF_FIELDS_THREAD(F) F(U64, thread, _) F(U64, os_tid, _) F(CSTR, name, _)
#define PF_FIELDS_ATTR(F) F(SPAN, fields, _) F(U32, key, _) F(U32, name, _) F(U32, value, _)

#define PF_FIELDS_REGION(F)                                                                   \
    F(U32, name, name_id) F(KIND, kind, kind) F(U32, depth, depth) F(DT, start, start_ns)    \
    F(DUR, dur, dur_ns)
#define PF_FIELDS_STEP(F)                                                                     \
    F(U64, number, value) F(U32, flags, flags) F(DT, start, start_ns) F(DUR, dur, dur_ns)
#define PF_FIELDS_MEMORY(F) F(U32, series, name_id) F(DT, t, start_ns) F(U64, bytes, value)
#define PF_FIELDS_COUNTER(F) F(U32, name, name_id) F(DT, t, start_ns) F(F64, value, fvalue)
#define PF_FIELDS_MARK(F) F(U32, name, name_id) F(DT, t, start_ns)
#define PF_FIELDS_DROPPED(F) F(DROPS, count, value) F(DT, t, start_ns)
#define PF_FIELDS_GPU_KERNEL(F)                                                               \
    F(U32, name, name_id) F(U32, device, device) F(U32, stream, stream)                      \
    F(U64, correlation, correlation) F(DT, start, start_ns) F(DUR, dur, dur_ns)
#define PF_FIELDS_GPU_MEMCPY(F)                                                               \
    F(U32, copy_kind, subkind) F(U32, device, device) F(U32, stream, stream)                 \
    F(U64, correlation, correlation) F(U64, bytes, value) F(DT, start, start_ns)             \
    F(DUR, dur, dur_ns)
#define PF_FIELDS_GPU_MEMSET(F)                                                               \
    F(U32, device, device) F(U32, stream, stream) F(U64, correlation, correlation)           \
    F(U64, bytes, value) F(DT, start, start_ns) F(DUR, dur, dur_ns)
#define PF_FIELDS_SYNC(F)                                                                     \
    F(U32, sync_kind, subkind) F(U32, device, device) F(U32, stream, stream)                 \
    F(U64, correlation, correlation) F(DT, start, start_ns) F(DUR, dur, dur_ns)
#define PF_FIELDS_API(F)                                                                      \
    F(U32, name, name_id) F(U64, correlation, correlation) F(DT, start, start_ns)            \
    F(DUR, dur, dur_ns)

/* Tags 0x81..0xFF, extensions a later minor version may assign, are no
 * rows: readers skip them (a varint length, then that many bytes). */
#define PF_RECORDS(X)                                                                         \
    X(string, PF_TAG_STRING, PF_TAG_STRING, DEF, 0, "string record", PF_FIELDS_STRING)      \
    X(thread, PF_TAG_THREAD, PF_TAG_THREAD, DEF, PROF_EV_THREAD, "thread record",           \
      PF_FIELDS_THREAD)                                                                      \
    X(region, PF_TAG_REGION, PF_TAG_REGION_LAST, EVENT, PROF_EV_REGION, "record",           \
      PF_FIELDS_REGION)                                                                      \
    X(step, PF_TAG_STEP, PF_TAG_STEP, EVENT, PROF_EV_STEP, "record", PF_FIELDS_STEP)        \
    X(memory, PF_TAG_MEMORY, PF_TAG_MEMORY, EVENT, PROF_EV_MEMORY, "record",                \
      PF_FIELDS_MEMORY)                                                                      \
    X(counter, PF_TAG_COUNTER, PF_TAG_COUNTER, EVENT, PROF_EV_COUNTER, "record",            \
      PF_FIELDS_COUNTER)                                                                     \
    X(mark, PF_TAG_MARK, PF_TAG_MARK, EVENT, PROF_EV_MARK, "record", PF_FIELDS_MARK)        \
    X(dropped, PF_TAG_DROPPED, PF_TAG_DROPPED, EVENT, PROF_EV_DROPPED, "record",            \
      PF_FIELDS_DROPPED)                                                                     \
    X(gpu_kernel, PF_TAG_GPU_KERNEL, PF_TAG_GPU_KERNEL, EVENT, PROF_EV_GPU_KERNEL, "record", \
      PF_FIELDS_GPU_KERNEL)                                                                  \
    X(gpu_memcpy, PF_TAG_GPU_MEMCPY, PF_TAG_GPU_MEMCPY, EVENT, PROF_EV_GPU_MEMCPY, "record", \
      PF_FIELDS_GPU_MEMCPY)                                                                  \
    X(gpu_memset, PF_TAG_GPU_MEMSET, PF_TAG_GPU_MEMSET, EVENT, PROF_EV_GPU_MEMSET, "record", \
      PF_FIELDS_GPU_MEMSET)                                                                  \
    X(sync, PF_TAG_SYNC, PF_TAG_SYNC, EVENT, PROF_EV_SYNC, "record", PF_FIELDS_SYNC)        \
    X(api, PF_TAG_API, PF_TAG_API, EVENT, PROF_EV_API, "record", PF_FIELDS_API)             \
    X(attr, PF_TAG_ATTR, PF_TAG_ATTR, DEF, PROF_EV_ATTR, "name attribute", PF_FIELDS_ATTR)

/* The C parameters of the encoder, per field kind. */
#define PF_PARAM(KIND, PARAM, MEMBER) PF_PARAM_##KIND(PARAM)
#define PF_PARAM_U32(p) , uint32_t p
#define PF_PARAM_U64(p) , uint64_t p
#define PF_PARAM_DT(p) , uint64_t p
#define PF_PARAM_DUR(p) , uint64_t p
#define PF_PARAM_F64(p) , double p
#define PF_PARAM_DROPS(p) , uint64_t p
#define PF_PARAM_TEXT(p) , const char *p, size_t p##_len
#define PF_PARAM_CSTR(p) , const char *p
#define PF_PARAM_KIND(p) , uint32_t p
#define PF_PARAM_SPAN(p)

#endif
