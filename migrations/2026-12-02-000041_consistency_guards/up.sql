-- Invariants of SPEC §3, §11 and §12 that one row (or one foreign key) can
-- hold, so the database refuses them instead of the consistency report
-- finding them afterwards (issue 25). Each is named in
-- src/consistency/checks.rs and docs/RELIABILITY.md.

-- §12: only a decision rejects a booking, and a reason belongs to a decision.
-- (A PENDING booking may carry an earlier decision: an approved booking moved
-- in a room that needs approval waits again.)
ALTER TABLE reservation
    ADD CONSTRAINT reservation_rejected_was_decided CHECK (status <> 'REJECTED' OR decided_at IS NOT NULL),
    ADD CONSTRAINT reservation_reason_has_decision CHECK (decision_reason IS NULL OR decided_at IS NOT NULL);

-- §11: only a confirmed booking of a check-in room is checked in (it may be
-- cancelled afterwards), and the sweeper releases only such bookings that
-- nobody checked in.
ALTER TABLE reservation
    ADD CONSTRAINT reservation_checked_in_needs_check_in
        CHECK (checked_in_at IS NULL OR (check_in_required AND status IN ('CONFIRMED', 'CANCELLED'))),
    ADD CONSTRAINT reservation_released_was_no_show
        CHECK (status <> 'RELEASED' OR (check_in_required AND checked_in_at IS NULL));

-- §3: an offer is made to one entry: same resource, same owner, same units.
ALTER TABLE waitlist_entry
    ADD CONSTRAINT waitlist_entry_offer_terms UNIQUE (id, resource_id, owner_digest, quantity);
ALTER TABLE capacity_offer
    ADD CONSTRAINT capacity_offer_matches_entry FOREIGN KEY (entry_id, resource_id, owner_digest, quantity)
        REFERENCES waitlist_entry (id, resource_id, owner_digest, quantity);
