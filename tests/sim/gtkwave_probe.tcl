# Run by GTKWave (-S) under Xvfb: writes what the view shows to $env(PROBE_OUT), then quits.
# Every query is caught so that the script always reaches Quit (a Tcl error would leave
# GTKWave waiting for input).
set out [open $::env(PROBE_OUT) w]
foreach cmd {getWindowStartTime getWindowEndTime getMinTime getMaxTime} {
  if {[catch {puts $out "$cmd [gtkwave::$cmd]"} err]} { puts $out "error $cmd $err" }
}
if {[catch {foreach s [gtkwave::getDisplayedSignals] { puts $out "signal $s" }} err]} {
  puts $out "error getDisplayedSignals $err"
}
close $out
gtkwave::/File/Quit
