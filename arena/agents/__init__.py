"""Agents: what an agent sees (view), the Agent protocol, scripted baselines, and (later) LLM agents."""
