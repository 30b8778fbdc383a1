/* crc32c.h - CRC-32C (Castagnoli), the checksum of .prof headers and block
 * payloads. Reentrant and async-signal-safe: the SSE4.2 instruction where the
 * CPU has it, else a const table; both give the same values. */
#ifndef PROF_UTIL_CRC32C_H
#define PROF_UTIL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continues a CRC: pass 0 to start. crc32c("123456789") == 0xE3069283. */
uint32_t crc32c_update(uint32_t crc, const void *data, size_t len);

/* The same with the table alone, whatever the CPU (the fallback, and what
 * tests compare the instruction path with). */
uint32_t crc32c_update_portable(uint32_t crc, const void *data, size_t len);

#endif
