/* A stand-in for Windows' bcryptprimitives.dll, which wine 8 lacks: Rust's
 * standard library takes its random numbers from ProcessPrng there. Used
 * only by the test harness (cargo xtask dist --run) inside its own wine
 * prefix; the shipped binary is never changed. Built with Debian's
 * mingw-w64 gcc. */
#include <windows.h>

BOOLEAN NTAPI SystemFunction036(PVOID buffer, ULONG length); /* RtlGenRandom */

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
