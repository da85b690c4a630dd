package custody

import "context"

// KeysReader is a Tx that reads the versions of many keys of one owner in
// one read (the PostgreSQL store: one round trip where a key at a time
// takes one each). RememberBatch reads its candidates' keys with it.
type KeysReader interface {
	// KeysVersions is KeyVersions of each of keys, in their order.
	KeysVersions(ctx context.Context, tenant, owner string, keys []NamespaceKey) ([]KeyVersions, error)
}

// NamespaceKey is a key of a namespace.
type NamespaceKey struct{ Namespace, Key string }

// KeyVersions is what Tx.KeyVersions reads of a key: the id of the
// admitted version in force ("" for none) and the highest version.
type KeyVersions struct {
	Current string
	Max     int
}

// keysAhead is a transaction whose KeyVersions answers from keys read
// ahead, for each key no record inserted or updated through it since has
// touched; any other key is read from the store.
type keysAhead struct {
	Tx
	tenant, owner string
	read          map[NamespaceKey]KeyVersions
}

// readKeysAhead returns tx with the keys of recs (all of tenant and owner)
// read ahead when the store reads many keys at once, and tx itself
// otherwise. tx is the service's eventTx (update), and so is the result.
func readKeysAhead(ctx context.Context, tx Tx, tenant, owner string, recs []*Record) (Tx, error) {
	et, ok := tx.(*eventTx)
	if !ok {
		return tx, nil
	}
	kr, ok := et.Tx.(KeysReader)
	if !ok {
		return tx, nil
	}
	var keys []NamespaceKey
	seen := map[NamespaceKey]bool{}
	for _, r := range recs {
		k := NamespaceKey{r.Namespace, r.Key}
		if r.Key != "" && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	if len(keys) < 2 {
		return tx, nil
	}
	vs, err := kr.KeysVersions(ctx, tenant, owner, keys)
	if err != nil {
		return nil, err
	}
	ka := &keysAhead{Tx: et.Tx, tenant: tenant, owner: owner, read: make(map[NamespaceKey]KeyVersions, len(keys))}
	for i, k := range keys {
		ka.read[k] = vs[i]
	}
	return &eventTx{Tx: ka, events: et.events}, nil
}

func (k *keysAhead) KeyVersions(ctx context.Context, tenant, owner, namespace, key string) (string, int, error) {
	if tenant == k.tenant && owner == k.owner {
		if v, ok := k.read[NamespaceKey{namespace, key}]; ok {
			return v.Current, v.Max, nil
		}
	}
	return k.Tx.KeyVersions(ctx, tenant, owner, namespace, key)
}

func (k *keysAhead) InsertRecord(ctx context.Context, r *Record) error {
	k.touch(r)
	return k.Tx.InsertRecord(ctx, r)
}

func (k *keysAhead) UpdateRecord(ctx context.Context, r *Record) error {
	k.touch(r)
	return k.Tx.UpdateRecord(ctx, r)
}

// touch forgets what was read ahead of r's key: the store has it now.
func (k *keysAhead) touch(r *Record) {
	if r.Tenant == k.tenant && r.Owner == k.owner {
		delete(k.read, NamespaceKey{r.Namespace, r.Key})
	}
}
