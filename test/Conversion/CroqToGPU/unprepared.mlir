// RUN: croq-opt %s --convert-croq-to-gpu --split-input-file --verify-diagnostics

// The patterns lower only the decisions earlier passes made: a wait needs
// the parity croq-assign-phases gives it.
func.func @negative_wait_without_parity(%n: index) {
  croq.parallel (%b) by [%n] : block {
    %e = croq.event.alloc arrivals 1 : !croq.event<shared>
    croq.event.trigger %e : !croq.event<shared>
    // expected-error @below {{has no phase parity: run croq-assign-phases before convert-croq-to-gpu}}
    croq.event.wait %e : !croq.event<shared>
  }
  return
}

// -----

func.func @negative_event_without_arrivals(%n: index) {
  croq.parallel (%b) by [%n] : block {
    // expected-error @below {{has no arrival count: run croq-assign-arrivals before convert-croq-to-gpu}}
    %e = croq.event.alloc : !croq.event<shared>
    croq.event.trigger %e : !croq.event<shared>
  }
  return
}
