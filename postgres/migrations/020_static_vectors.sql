-- The built-in embedder is static (embed.Static): its semantic list
-- scores the candidates' texts when a search reads them, and no worker
-- stores its vectors any more. Those stored before go; vectors of other
-- models (openai) stay.
DELETE FROM vectors WHERE left(model, 8) = 'builtin-';
