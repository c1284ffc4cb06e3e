"""The learned READ/SPEAK policy as the voice runs it: the decision loop (``driver``) and the trained agent in
onnxruntime (``agent``). Its training (torch, outside the app) is ``engine.learned``."""
