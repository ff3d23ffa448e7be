// Worked examples of MIFARE DESFire EV1 exchanges with a real card, recorded by Elmue (PN532
// reader, DESFire EV1 8K, 2016) and published with his door-lock project: "DESFire EV1
// Communication Examples", https://www.codeproject.com/Articles/1096861 , file
// "Desfire EV1 Communication Examples.htm" of github.com/sotechcllc/RFDoorLock at commit
// b57097cf6e524c05f5b0ae957d84b6ca40a1dbfe. Native frames (the PN532's framing removed):
// `command` is the command byte and its data, `answer` is the status byte and the data (as the
// card sends natively; ISO 7816 wrapping puts the status last, 91 xx). RndA is the reader's
// random number of an authentication, RndB the card's, SessKey the session key it yields.
// Sections: the PICC level on the factory DES key ('selftest'), a DES / 2K3DES application
// ('2k3des') and an AES application ('aes'), each in the order recorded.

/** One native exchange: [command, answer], hex. */
export type WorkedExchange = [command: string, answer: string];

export interface WorkedStep {
  title: string;
  exchanges: WorkedExchange[];
  RndA?: string;
  RndB?: string;
  SessKey?: string;
}

// prettier-ignore
export const workedExamples: Record<'selftest' | '2k3des' | 'aes', WorkedStep[]> = {
  'selftest': [
    { title: 'SelectApplication(0x000000)', exchanges: [['5A000000', '00']] },
    { title: 'GetKeyVersion()', exchanges: [['6400', '0000']] },
    { title: 'Authenticate(KeyNo= 0, Key= 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 (DES))', exchanges: [['1A00', 'AF5D994CE085F24089'], ['AF21D0AD5F2FD97454A746CC80567F1B1C', '00913C6DED84221C41']], RndA: '849B36C5F8BF4A09', RndB: '4FD1B75942A8B8E1', SessKey: '849A36C44ED0B658849A36C44ED0B658' },
    { title: 'GetCardVersion()', exchanges: [['60', 'AF04010101001A05'], ['AF', 'AF04010101041A05'], ['AF', '0004063F72633480BA4519E3204913CDC810BAFA401759']] },
    { title: 'FormatCard()', exchanges: [['FC', '009C2C813A065C45F7']] },
    { title: 'CreateApplication(App= 0x00DE16, KeyCount= 2, Type= 3DES)', exchanges: [['CA16DE000F02', '000A1379B01D85AD47']] },
    { title: 'CreateApplication(App= 0x00DE24, KeyCount= 2, Type= 3K3DES)', exchanges: [['CA24DE000F42', '005D73AE5287A1BBE4']] },
    { title: 'CreateApplication(App= 0x00AE16, KeyCount= 2, Type= AES)', exchanges: [['CA16AE000F82', '003B68D72A3BE0D20C']] },
    { title: 'CreateApplication(App= 0xAABBCC, KeyCount= 1, Type= 3DES)', exchanges: [['CACCBBAA0F01', '00F11AC0738EF83878']] },
    { title: 'GetApplicationIDs()', exchanges: [['6A', '0016DE0024DE0016AE00CCBBAA2739154E2630D650']] },
    { title: 'DeleteApplication(0xAABBCC)', exchanges: [['DACCBBAA', '00A9AF19052292F662']] },
    { title: 'GetApplicationIDs()', exchanges: [['6A', '0016DE0024DE0016AE00520E51E00AF06D5E']] },
    { title: 'SelectApplication(0x00DE16)', exchanges: [['5A16DE00', '00']] },
    { title: 'Authenticate(KeyNo= 0, Key= 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 (DES))', exchanges: [['1A00', 'AF8476D1CF3024B7C7'], ['AFDAC67AB743763DC9FAF8A0AE504E80C5', '0013E9E4FA4388BF16']], RndA: '49EC63DECDE00772', RndB: '3B3DFE628164BFDA', SessKey: '48EC62DE3A3CFE6248EC62DE3A3CFE62' },
    { title: 'GetKeySettings()', exchanges: [['45', '000F0225DD8D7731B1CFD5']] },
    { title: 'ChangeKeySettings(0x0D)', exchanges: [['5427882805FC3FD49D', '00A628378374270ACD']] },
    { title: 'GetKeySettings()', exchanges: [['45', '000D02613FB2D3F453D2E4']] },
  ],
  '2k3des': [
    { title: 'SelectApplication(0x00DE16)', exchanges: [['5A16DE00', '00']] },
    { title: 'Authenticate(KeyNo= 0, Key= 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 (DES))', exchanges: [['1A00', 'AFDE50F92310CAF5A5'], ['AFE00616668704D5549C8D6A13A0F8FCED', '001D9D2954697DE760']], RndA: 'C96CE35E4D6087F2', RndB: '4C647E5672E2A651', SessKey: 'C86CE25E4C647E56C86CE25E4C647E56' },
    { title: 'ChangeKey(KeyNo= 0)', exchanges: [['C400BEDE0FC6ED347DCF0D51C717DF75D97D2C5A2BA6CAC7479D', '00']] },
    { title: 'Authenticate(KeyNo= 0, Key= 00 10 20 31 40 50 60 70 80 90 A0 B0 B0 A0 90 80 (2K3DES))', exchanges: [['1A00', 'AFB295579926155AE3'], ['AF70F349740C945DAE159BA9FEDBCC461A', '00B8FD7FE56B241FC4']], RndA: '530E3D90F7A201C4', RndB: 'BCD8299747332DAF', SessKey: '520E3C90BCD82896F6A200C446322CAE' },
    { title: 'ChangeKey(KeyNo= 0)', exchanges: [['C40094E4F709DC2A2B07552610A1966E5C49EC90F616EDECA55B', '00']] },
    { title: 'Authenticate(KeyNo= 0, Key= 10 18 20 29 30 38 40 48 50 58 60 68 70 78 80 88 (2K3DES))', exchanges: [['1A00', 'AF9414819CC8BB62C3'], ['AF937E6B1854A6D92E0FD975D9909001E8', '00E055D11DD9535060']], RndA: 'DDB097C2A1E47B96', RndB: 'A40E79E0F52F63AF', SessKey: 'DCB096C2A40E78E0A0E47A96F42E62AE' },
    { title: 'GetKeyVersion()', exchanges: [['6400', '00103345AA95F2D956CF']] },
    { title: 'ChangeKey(KeyNo= 0)', exchanges: [['C400FC9E20FD77191E2AAB0CFD53D9999984BC59E886BFEB42D0', '00']] },
    { title: 'Authenticate(KeyNo= 0, Key= 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 (DES))', exchanges: [['1A00', 'AF53A670D78C0DFFD6'], ['AFB308408B575A2025253D49D693CCC29C', '00525BB01E5B70B794']], RndA: 'CBA675E8EFBAB99C', RndB: 'CBE9525FB7DF5C3A', SessKey: 'CAA674E8CAE8525ECAA674E8CAE8525E' },
    { title: 'ChangeKey(KeyNo= 1)', exchanges: [['C4014EB669E48DCA584749542E1BE89CB4C7845A38C57D19DE59', '002EAD04DCF121E0FE']] },
    { title: 'ChangeKey(KeyNo= 1)', exchanges: [['C401FA7BEFA6782C93E8D69CF7352CFD33DF5BC8AC4FBA4906FC', '00CB0A506405512893']] },
    { title: 'Authenticate(KeyNo= 1, Key= 10 18 20 29 30 38 40 48 50 58 60 68 70 78 80 88 (2K3DES))', exchanges: [['1A01', 'AF87D3AC1E09570AAD'], ['AFD82E8C092631FE15257D67629FC929D5', '00C4132CEF0D13F812']], RndA: 'F7A201C4DB760538', RndB: '608BECD60A7E4934', SessKey: 'F6A200C4608AECD6DA7604380A7E4834' },
  ],
  'aes': [
    { title: 'SelectApplication(0x00AE16)', exchanges: [['5A16AE00', '00']] },
    { title: 'Authenticate(KeyNo= 0, Key= 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 (AES))', exchanges: [['AA00', 'AFB969FDFE56FD91FC9DE6F6F213B8FD1E'], ['AF36AAD7DF6E436BA08D18613830A70D5AD43E3D3F4A8D47541EEE623A934E4774', '00800DB680BC146BD121D6578F2D2E2059']], RndA: 'F44B26F5686F3A391CD38EBD10772281', RndB: 'C05DDD714FD788A6B7B754F3C4D066E8', SessKey: 'F44B26F5C05DDD7110772281C4D066E8' },
    { title: 'ChangeKey(KeyNo= 0)', exchanges: [['C400E9F85E219496C2B58C1090DC3935FAE9E840CF61B383D9531946256B1F110C10', '00']] },
    { title: 'Authenticate(KeyNo= 0, Key= 00 10 20 30 40 50 60 70 80 90 A0 B0 B0 A0 90 80 (AES))', exchanges: [['AA00', 'AFCCC8316C2B2613FE9A189BAC9CC89D03'], ['AFC02E061E72E17726489CAEEC997C523758BF863EFE7671C55B4665D06ACCD97B', '0072ACCC0BDEA482B53185BB5AD0086246']], RndA: 'C2A1E47B96A5589FAAE90C03FE6D00A7', RndB: '271047125A2AA58178F5C51B1177A19B', SessKey: 'C2A1E47B27104712FE6D00A71177A19B' },
    { title: 'ChangeKey(KeyNo= 0)', exchanges: [['C4002945E3760E60F4A4046BB8A505B31CF559A3A2E05213BC82942CA6AB5DBCECF5', '00']] },
    { title: 'Authenticate(KeyNo= 0, Key= 10 18 20 28 30 38 40 48 50 58 60 68 70 78 80 88 (AES))', exchanges: [['AA00', 'AF3E2BE626C05E7798EE518355A751648E'], ['AFFABF71BB0DC45B8F31BAEDDFF7F3439652D4094DF12C17EF0C94353E6D7770C8', '001CE6C574E24923D404E18B6A240C1B08']], RndA: '90F7A201C4DB760538FF8A49EC63DECD', RndB: '910368457E2E9AA167355BFB544B9931', SessKey: '90F7A20191036845EC63DECD544B9931' },
    { title: 'GetKeyVersion()', exchanges: [['6400', '00108A8FA36F55CD210D']] },
    { title: 'ChangeKey(KeyNo= 0)', exchanges: [['C400635375E4919F8AF2E9E86B1C1BA55B0C0807EAF484D7A7EF6E0C3084160F5A61', '00']] },
    { title: 'Authenticate(KeyNo= 0, Key= 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 (AES))', exchanges: [['AA00', 'AFEDDAF0C5D9A7CF42B8808BE2013899A1'], ['AFD8105F874E2CA57B76C354A8066B0D7880B0C4EC399DBF253438DB46D75F8F60', '00459C76B71AB9F1736413F5ACD73E7DF9']], RndA: 'C2A1E47B96A5589FAAE90C03FE6D00A7', RndB: 'D81000444B976F48340DCDE34D7AB17C', SessKey: 'C2A1E47BD8100044FE6D00A74D7AB17C' },
    { title: 'ChangeKey(KeyNo= 1)', exchanges: [['C401E7ECCB6BD1CA64BC161A12B1C024F71430337408C8A87EACAB7A1FF18951FCA3', '002128D3CD9C9ACFFF']] },
    { title: 'ChangeKey(KeyNo= 1)', exchanges: [['C4012841938C40A4BC2C33064482FEADA5F43EC535D34255B0286C2352CD173863C7', '00CAF3BF0B2836E9DE']] },
    { title: 'Authenticate(KeyNo= 1, Key= 10 18 20 28 30 38 40 48 50 58 60 68 70 78 80 88 (AES))', exchanges: [['AA01', 'AFB351CB2465D4F33AC627FD6E87A168F2'], ['AF044B6CAC343A0865895149649CA8DDE1F5AC4EC67BD208900AF02F049E05F0B0', '00A2EE144B1012FBEB7B2F11132D95A454']], RndA: '40E7D27174CBA675E8EFBAB99C530E3D', RndB: '626FFBD45CAF334ACCA45599304F5B17', SessKey: '40E7D271626FFBD49C530E3D304F5B17' },
  ],
};
