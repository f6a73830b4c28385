# nn.Embedding: words to vectors, averaged into a sentence vector for a tiny classifier.
import torch
from torch import nn

vocab = ["<pad>", "the", "stock", "goes", "up", "down", "today", "not"]
index = {word: i for i, word in enumerate(vocab)}
sentences = ["the stock goes up today", "the stock goes down", "not up today"]
longest = max(len(s.split()) for s in sentences)
ids = torch.tensor([[index[w] for w in s.split()] + [0] * (longest - len(s.split())) for s in sentences])
print(f"ids:\n{ids}")

embed = nn.Embedding(len(vocab), 4, padding_idx=0)
classify = nn.Linear(4, 2)

vectors = embed(ids)  # (sentences, words, 4)
mask = (ids != 0).unsqueeze(2).float()
sentence = (vectors * mask).sum(dim=1) / mask.sum(dim=1)
print(f"embedding of 'stock': {embed.weight[index['stock']]}")
predictions = classify(sentence)
for s, logits in zip(sentences, predictions.tolist(), strict=True):
    print(f"{s!r:28s} -> {[round(v, 4) for v in logits]}")
