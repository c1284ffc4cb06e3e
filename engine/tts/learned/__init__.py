"""A learned READ/SPEAK policy for the voice (issue 19): episodes of real word arrivals, the environment over them,
training (torch, outside the app) and the policy run with onnxruntime."""
