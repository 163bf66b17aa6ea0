//! The output log of a background process: events with cursors, bounded in
//! memory.
//!
//! Every event gets the next cursor: 1, 2, 3, ... A reader passes back the
//! cursor of the last event it saw and gets everything after it, so a reader
//! that reconnects with its last cursor misses nothing that is still held.
//! When the log is over its byte budget the oldest events are dropped; a reader
//! whose cursor points before the oldest held event is told so with one
//! synthetic `gap` event that says how many it missed, and reading goes on
//! from there. The newest event (the `exit` event, once there is one) is never
//! dropped.

use std::collections::VecDeque;

use holm_proto::guest::{OutputEvent, OutputKind};

/// What an event costs besides its text, so a flood of tiny events is bounded
/// too.
const EVENT_OVERHEAD: usize = 64;

fn cost(kind: &OutputKind) -> usize {
    EVENT_OVERHEAD
        + match kind {
            OutputKind::Stdout { data } | OutputKind::Stderr { data } => data.len(),
            OutputKind::Gap { .. } | OutputKind::Exit { .. } => 0,
        }
}

/// A cursor that no event has had yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CursorAhead {
    /// The cursor asked for.
    pub cursor: u64,
    /// The newest cursor there is.
    pub newest: u64,
}

/// A process's events, oldest first.
#[derive(Debug)]
pub struct EventLog {
    events: VecDeque<OutputEvent>,
    /// The cursor of the newest event ever added; 0 before the first.
    newest: u64,
    /// What the held events cost.
    bytes: usize,
    /// The budget.
    max_bytes: usize,
}

impl EventLog {
    /// An empty log that holds about `max_bytes` of events.
    pub fn new(max_bytes: usize) -> Self {
        Self { events: VecDeque::new(), newest: 0, bytes: 0, max_bytes }
    }

    /// Adds an event and answers its cursor. Drops the oldest events while
    /// the log is over budget, but never the one just added.
    pub fn push(&mut self, kind: OutputKind) -> u64 {
        self.newest += 1;
        self.bytes += cost(&kind);
        self.events.push_back(OutputEvent { cursor: self.newest, kind });
        while self.bytes > self.max_bytes && self.events.len() > 1 {
            if let Some(old) = self.events.pop_front() {
                self.bytes -= cost(&old.kind);
            }
        }
        self.newest
    }

    /// The cursor of the newest event; 0 when there is none.
    pub fn newest(&self) -> u64 {
        self.newest
    }

    /// How many events were dropped to stay within budget, in all.
    pub fn dropped(&self) -> u64 {
        self.events.front().map_or(self.newest, |e| e.cursor - 1)
    }

    /// The events after `cursor`: first a `gap` event if some of them were
    /// dropped, then held events until `max_bytes` of text is reached (at
    /// least one event when there is one).
    pub fn read(&self, cursor: u64, max_bytes: usize) -> Result<Vec<OutputEvent>, CursorAhead> {
        if cursor > self.newest {
            return Err(CursorAhead { cursor, newest: self.newest });
        }
        let mut out = Vec::new();
        let dropped = self.dropped();
        if cursor < dropped {
            out.push(OutputEvent {
                cursor: dropped,
                kind: OutputKind::Gap { missed: dropped - cursor },
            });
        }
        let first = cursor.max(dropped) - dropped;
        let mut budget = 0usize;
        for event in self.events.iter().skip(usize::try_from(first).unwrap_or(usize::MAX)) {
            let size = cost(&event.kind);
            if budget > 0 && budget + size > max_bytes {
                break;
            }
            budget += size;
            out.push(event.clone());
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(s: &str) -> OutputKind {
        OutputKind::Stdout { data: s.to_owned() }
    }

    fn texts(events: &[OutputEvent]) -> Vec<String> {
        events
            .iter()
            .map(|e| match &e.kind {
                OutputKind::Stdout { data } => format!("{}:out:{data}", e.cursor),
                OutputKind::Stderr { data } => format!("{}:err:{data}", e.cursor),
                OutputKind::Gap { missed } => format!("{}:gap:{missed}", e.cursor),
                OutputKind::Exit { exit_code, .. } => format!("{}:exit:{exit_code:?}", e.cursor),
            })
            .collect()
    }

    #[test]
    fn cursors_start_at_one_and_increase() {
        let mut log = EventLog::new(1 << 20);
        assert_eq!(log.newest(), 0);
        assert_eq!(log.push(out("a")), 1);
        assert_eq!(log.push(OutputKind::Stderr { data: "b".into() }), 2);
        assert_eq!(log.push(OutputKind::Exit { exit_code: Some(0), signal: None }), 3);
        assert_eq!(
            texts(&log.read(0, usize::MAX).unwrap()),
            ["1:out:a", "2:err:b", "3:exit:Some(0)"]
        );
        assert_eq!(texts(&log.read(1, usize::MAX).unwrap()), ["2:err:b", "3:exit:Some(0)"]);
        assert!(log.read(3, usize::MAX).unwrap().is_empty());
    }

    #[test]
    fn reading_in_pages_with_the_last_cursor_misses_nothing() {
        let mut log = EventLog::new(1 << 20);
        for i in 0..100 {
            log.push(out(&format!("{i};")));
        }
        let mut cursor = 0;
        let mut seen = String::new();
        loop {
            // A small page budget: a few events per read.
            let page = log.read(cursor, 3 * EVENT_OVERHEAD).unwrap();
            if page.is_empty() {
                break;
            }
            assert!(page.len() <= 3);
            for e in &page {
                assert_eq!(e.cursor, cursor + 1, "no cursor is skipped");
                cursor = e.cursor;
                if let OutputKind::Stdout { data } = &e.kind {
                    seen.push_str(data);
                }
            }
        }
        let want: String = (0..100).map(|i| format!("{i};")).collect();
        assert_eq!(seen, want);
    }

    #[test]
    fn one_event_larger_than_the_page_is_still_answered() {
        let mut log = EventLog::new(1 << 20);
        log.push(out(&"x".repeat(1000)));
        assert_eq!(log.read(0, 10).unwrap().len(), 1);
    }

    #[test]
    fn over_budget_drops_the_oldest_and_a_late_reader_gets_a_gap() {
        // Each 36-byte event costs 100: the budget holds three.
        let mut log = EventLog::new(300);
        let text = |i: u32| format!("{i:036}");
        for i in 1..=10 {
            log.push(out(&text(i)));
        }
        assert_eq!(log.dropped(), 7);
        let events = log.read(0, usize::MAX).unwrap();
        assert_eq!(events[0].kind, OutputKind::Gap { missed: 7 });
        assert_eq!(events[0].cursor, 7, "the gap's cursor resumes right after it");
        assert_eq!(events.iter().skip(1).map(|e| e.cursor).collect::<Vec<_>>(), [8, 9, 10]);
        // A reader that fell behind by less gets a smaller gap.
        let events = log.read(5, usize::MAX).unwrap();
        assert_eq!(events[0].kind, OutputKind::Gap { missed: 2 });
        // A reader that kept up gets no gap.
        let events = log.read(8, usize::MAX).unwrap();
        assert_eq!(events.iter().map(|e| e.cursor).collect::<Vec<_>>(), [9, 10]);
        // Reading on from the gap's cursor continues without a second gap.
        let events = log.read(7, usize::MAX).unwrap();
        assert_eq!(events.iter().map(|e| e.cursor).collect::<Vec<_>>(), [8, 9, 10]);
    }

    #[test]
    fn the_newest_event_is_kept_even_when_it_alone_is_over_budget() {
        let mut log = EventLog::new(100);
        log.push(out("a"));
        log.push(out(&"b".repeat(500)));
        let events = log.read(0, usize::MAX).unwrap();
        assert_eq!(events[0].kind, OutputKind::Gap { missed: 1 });
        assert_eq!(events[1].cursor, 2);
        log.push(OutputKind::Exit { exit_code: None, signal: Some("SIGKILL".into()) });
        let events = log.read(2, usize::MAX).unwrap();
        assert_eq!(texts(&events), ["3:exit:None"]);
    }

    #[test]
    fn a_cursor_from_the_future_is_refused() {
        let mut log = EventLog::new(1000);
        log.push(out("a"));
        assert_eq!(log.read(5, 100), Err(CursorAhead { cursor: 5, newest: 1 }));
    }
}
