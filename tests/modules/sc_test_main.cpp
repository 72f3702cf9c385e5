// gtest entry for tests that elaborate SystemC modules. Every TEST runs in its own
// process (gtest_discover_tests): a kernel elaborates once per process. SystemC warnings
// are turned into errors so a test cannot pass with a kernel complaint.
#include <gtest/gtest.h>

#include <systemc>

int sc_main(int argc, char* argv[]) {
  sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING,
                                          sc_core::SC_DISPLAY | sc_core::SC_THROW);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
