// libsystemc.so defines main() and calls sc_main(), so every executable that links it must
// define sc_main even though Retarget's binaries have their own main() and drive the kernel
// from simulator::Simulate. retarget_simulator forces this object into every link
// (CMakeLists.txt: --undefined=sc_main), so linking the library is enough.
extern "C" int sc_main(int /*argc*/, char* /*argv*/[]) { return 0; }
