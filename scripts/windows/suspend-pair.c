/* Outside checks (Windows, under Wine): suspend `rxnode run` and its TX guard as
 * Process Explorer's "Suspend" or PsSuspend would (NtSuspendProcess), once the
 * radio is keyed, and time the guard's end while both stay suspended.
 *   suspend-pair.exe LOG HOLD_MS [guard-only]
 * guard-only: suspend the guard alone (run keeps running). LOG: rxsim's event log; keyed = its first "activateStream TX" line. run is the
 * rxnode.exe whose parent is not rxnode.exe; the guard is run's rxnode.exe child.
 * Prints one line per fact; resumes both after HOLD_MS ms from the key-up. */
#include <windows.h>
#include <tlhelp32.h>
#include <stdio.h>
#include <string.h>
typedef LONG(NTAPI *NtProc)(HANDLE);

static int keyed(const char *log) {
    static char buf[1 << 16];
    FILE *f = fopen(log, "rb");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strstr(buf, "activateStream TX") != NULL;
}

static int find(DWORD *run, DWORD *guard) {
    PROCESSENTRY32W e[256];
    int n = 0;
    HANDLE s = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
    if (s == INVALID_HANDLE_VALUE) return 0;
    PROCESSENTRY32W p = {.dwSize = sizeof p};
    for (BOOL more = Process32FirstW(s, &p); more && n < 256; more = Process32NextW(s, &p))
        if (_wcsicmp(p.szExeFile, L"rxnode.exe") == 0) e[n++] = p;
    CloseHandle(s);
    *run = *guard = 0;
    for (int i = 0; i < n; i++) {
        int child = 0;
        for (int j = 0; j < n; j++) child |= e[j].th32ProcessID == e[i].th32ParentProcessID;
        if (!child) *run = e[i].th32ProcessID;
    }
    for (int i = 0; i < n; i++)
        if (*run && e[i].th32ParentProcessID == *run) *guard = e[i].th32ProcessID;
    return *run && *guard;
}

int main(int argc, char **argv) {
    if (argc != 3 && !(argc == 4 && strcmp(argv[3], "guard-only") == 0)) return 2;
    int only = argc == 4;
    NtProc suspend = (NtProc)GetProcAddress(GetModuleHandleA("ntdll.dll"), "NtSuspendProcess");
    NtProc resume = (NtProc)GetProcAddress(GetModuleHandleA("ntdll.dll"), "NtResumeProcess");
    int hold = atoi(argv[2]);
    DWORD t0 = GetTickCount(), run = 0, guard = 0;
    while (!keyed(argv[1])) {
        if (GetTickCount() - t0 > 120000) { printf("no key-up within 120 s\n"); return 1; }
        Sleep(1);
    }
    DWORD k = GetTickCount();
    if (!find(&run, &guard)) { printf("keyed, but no run and guard pair of rxnode.exe\n"); return 1; }
    HANDLE hr = OpenProcess(PROCESS_SUSPEND_RESUME, FALSE, run);
    HANDLE hg = OpenProcess(PROCESS_SUSPEND_RESUME | SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION, FALSE, guard);
    if (!hr || !hg) { printf("cannot open run %lu / guard %lu\n", run, guard); return 1; }
    LONG a = only ? 0 : suspend(hr), b = suspend(hg);
    printf("keyed; %s (pid %lu) and its guard (pid %lu) %s %lu ms after the key-up was seen (status %ld %ld)\n",
           only ? "run kept running" : "run", run, guard, only ? "guard alone suspended" : "suspended",
           GetTickCount() - k, a, b);
    fflush(stdout);
    DWORD ended = 0, code = 0;
    while (GetTickCount() - k < (DWORD)hold) {
        if (!ended && WaitForSingleObject(hg, 0) == WAIT_OBJECT_0) {
            ended = GetTickCount() - k;
            GetExitCodeProcess(hg, &code);
        }
        Sleep(2);
    }
    if (ended)
        printf("guard ended %lu ms after the key-up while %s suspended (exit code %lu)\n", ended,
               only ? "it was" : "both were", code);
    else
        printf("guard still alive %d ms after the key-up while %s suspended\n", hold, only ? "it was" : "both were");
    if (!only) resume(hr);
    resume(hg);
    printf("resumed\n");
    return 0;
}
