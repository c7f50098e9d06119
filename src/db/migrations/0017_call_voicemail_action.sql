-- What a campaign's call does at an answering machine, as its campaign said when it placed the call. Kept with the
-- call, so a call that waits in the queue across a restart still does it; null: the agent's own setting.
ALTER TABLE calls ADD COLUMN voicemail_action text CHECK (voicemail_action IN ('hang_up', 'leave_message'));
