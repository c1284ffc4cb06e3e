"""The learned policy's training: episodes recorded from the pipeline, the environment that replays them through
the session's own code, the training set and the PPO trainer (torch). Above the pipeline; the runtime agent the
voice uses is ``engine.tts.learned``."""
