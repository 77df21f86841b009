// LeakSanitizer's built-in suppressions for every program that links the engines
// (//distributed:lsan_suppressions, linked statically and always, so the definition is in the
// executable, where LSan looks; outside --config=san the function is never called).
//
// Debian's Gloo and Open MPI are not instrumented and leak at exit, none of it ft's memory:
//   - Gloo 2022's tcp::CreateDeviceAttr keeps the list of getifaddrs(3) (one per device);
//   - Open MPI keeps its start-up state (libopen-rte, libevent, ...) until the process dies.
// Each entry names Gloo's function or an Open MPI library, never ft's code. Open MPI's
// plugins (mca_*.so) are unloaded by MPI_Finalize before LSan looks, so their frames have no
// module name: a process running under mpirun needs ASAN_OPTIONS=fast_unwind_on_malloc=0 for
// the stack to reach the Open MPI library that loaded them (mpi_test.sh sets it).

extern "C" const char* __lsan_default_suppressions() {
  return "leak:gloo::transport::tcp::CreateDeviceAttr\n"
         "leak:libmpi.so\n"
         "leak:libopen-pal.so\n"
         "leak:libopen-rte.so\n"
         "leak:libpmix.so\n"
         "leak:libhwloc.so\n"
         "leak:libevent\n";
}
