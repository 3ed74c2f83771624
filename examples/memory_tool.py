"""The Claude API's memory tool, served from a memdeck store: Claude reads and writes
/memories/<project>/<type>/<name>.md, and each file is a memory (what it creates waits in
`memdeck inbox` for your review).

    pip install 'memdeck[anthropic]'
    export ANTHROPIC_API_KEY=...
    python examples/memory_tool.py "Remember: the payment retry backoff must cap at 60 s"

Without ANTHROPIC_API_KEY it shows the tool's view of the store and stops (no network).
"""

from __future__ import annotations

import os
import sys

from store import Store
from store.interop.memory_tool import MemdeckMemoryTool


def main() -> int:
    prompt = " ".join(sys.argv[1:]) or "What do you remember about this project? Look in your memory first."
    with Store.open(project=os.environ.get("MEMDECK_PROJECT") or "demo") as store:
        tool = MemdeckMemoryTool(store)
        print(tool.call({"command": "view", "path": "/memories"}))
        if not os.environ.get("ANTHROPIC_API_KEY"):
            print("(set ANTHROPIC_API_KEY to let Claude use it)", file=sys.stderr)
            return 0
        from anthropic import Anthropic

        runner = Anthropic().beta.messages.tool_runner(
            model=os.environ.get("MEMDECK_EXAMPLE_MODEL", "claude-sonnet-4-6"), max_tokens=2048, tools=[tool],
            messages=[{"role": "user", "content": prompt}])
        for message in runner:
            for block in message.content:
                if block.type == "text":
                    print(block.text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
