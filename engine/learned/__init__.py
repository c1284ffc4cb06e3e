"""The learned READ/SPEAK policy's training: episodes recorded from the pipeline, the environment that replays them
into the real voice, the training set and the trainer (torch). Above the pipeline; the runtime agent the voice uses
is ``engine.tts.learned``."""
