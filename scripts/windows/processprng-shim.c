/* A test aid for running rxnode.exe under Wine 8, never shipped: Rust's std on
 * Windows draws its random bytes from bcryptprimitives.dll!ProcessPrng, which
 * Wine 8 lacks. This bcryptprimitives.dll forwards ProcessPrng to RtlGenRandom
 * (advapi32!SystemFunction036). scripts/windows/wine-loop.sh builds it with mingw
 * and puts it beside the exe. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, n)) return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
