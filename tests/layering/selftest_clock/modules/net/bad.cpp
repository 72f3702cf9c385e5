// A module reading the kernel's clock three ways: check_clock.py must reject each.
void Bad::run() {
  const sc_core::sc_time at = sc_core::sc_time_stamp();  // the kernel's clock
  wait(10, sc_core::SC_NS);                              // a literal time
  wait(deadline_ - at);                                  // an instant not from the calendar
  wait(deadline_ - EventCalendar::now());                // fine
  wait(ps_time(compute_time_ps_));                       // fine: a configured duration
}
