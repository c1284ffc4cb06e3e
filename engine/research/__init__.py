"""The research community's yardsticks: SimulEval's scorers on liveshadow's sessions, and liveshadow as SimulEval
agents. Only this package imports SimulEval (the optional ``research`` install, ``scripts/setup --research``)."""
