"""A tiny random Qwen2 model and a character tokenizer, made locally (no hub download), for
driving TRL's GRPOTrainer on CPU: `python tiny_model.py DIRECTORY`; `--tokenizer-only` saves
the tokenizer alone (verl's reward workers load one: test_verl.py). The tokenizer decodes
every printable ASCII character, newline and tab back exactly."""

import json
import sys
from pathlib import Path

from tokenizers import Tokenizer, models, pre_tokenizers, decoders
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
chars = [chr(c) for c in range(32, 127)] + ["\n", "\t"]
vocab = {"<pad>": 0, "<eos>": 1, "<bos>": 2, "<unk>": 3}
for c in chars:
    vocab.setdefault(c, len(vocab))
tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
tok.pre_tokenizer = pre_tokenizers.Split("", "isolated")
tok.decoder = decoders.Fuse()
fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", bos_token="<bos>", unk_token="<unk>")
fast.chat_template = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
fast.save_pretrained(sys.argv[1])
# The class name transformers 4 and 5 both load (5 writes its own new name, unknown to 4).
settings_path = Path(sys.argv[1]) / "tokenizer_config.json"
settings = json.loads(settings_path.read_text())
settings["tokenizer_class"] = "PreTrainedTokenizerFast"
settings_path.write_text(json.dumps(settings))
if "--tokenizer-only" in sys.argv:
    sys.exit(0)
config = Qwen2Config(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=4096, pad_token_id=0, eos_token_id=1, bos_token_id=2)
Qwen2ForCausalLM(config).save_pretrained(sys.argv[1])
