"""The learned policy as the voice runs it: its moves over the lookahead-1 rule (``moves``) and the trained agent in
onnxruntime (``agent``); the READ/SPEAK loop the wait-K-steps baseline runs (``driver``). Its training (torch, outside
the app) is ``engine.learned``."""
